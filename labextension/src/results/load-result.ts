import { formatBytes } from '../panel/shared/format';
import type { Kale } from '../types';

/**
 * "Load into the notebook" on an ended job's row: whether it is offered,
 * why not, and the cell it inserts. Pure: the row and the loader use what
 * this computes.
 */

/**
 * What an ended job left to load: its saved result (null: none recorded)
 * and the output files it wrote, by path (null: not read, when it saved a
 * result, or the server cannot list them).
 */
export interface ISaved {
  result: Kale.IJobResult | null;
  files: string[] | null;
}

/**
 * The row's button: enabled or not, and its tooltip (why not, when not).
 */
export interface ILoadOffer {
  enabled: boolean;
  /** The cell loads the result (else it lists the outputs only). */
  withResult: boolean;
  title: string;
}

/**
 * Whether a job has ended (its result and outputs will not change).
 */
export function hasEnded(job: Kale.IJobInfo): boolean {
  return job.status === 'Complete' || job.status === 'Failed';
}

/**
 * The button a job's row shows: none while the job has not ended; disabled
 * until what it saved is read, and when it saved nothing (saying why).
 */
export function loadOffer(
  job: Kale.IJobInfo,
  saved: ISaved | undefined
): ILoadOffer | null {
  if (!hasEnded(job)) {
    return null;
  }
  if (!saved) {
    return {
      enabled: false,
      withResult: false,
      title: 'Reading what the job saved…'
    };
  }
  const { result, files } = saved;
  if (result?.saved) {
    const what = [result.format, formatBytes(result.size)]
      .filter(Boolean)
      .join(', ');
    return {
      enabled: true,
      withResult: true,
      title: `Insert a cell below the active cell that loads its result (${what})`
    };
  }
  const why = result?.reason
    ? `No result was saved: ${result.reason}`
    : 'No result was saved';
  if (files?.length) {
    return {
      enabled: true,
      withResult: false,
      title: `${why}. Insert a cell that lists its ${Private.files(files.length)}`
    };
  }
  return { enabled: false, withResult: false, title: why };
}

/**
 * The cell that loads a job's result (or lists its outputs) in a kernel,
 * its last line the value, so running it shows it. The job's name is a
 * Python string literal whatever it holds; `saved` says what the job left
 * (no result: why, and its files by name).
 */
export function resultCellSource(name: string, saved: ISaved): string {
  const job = `get_job(${JSON.stringify(name)})`;
  if (saved.result?.saved) {
    return [
      'from kale_ext import get_job',
      `result = ${job}.result()`,
      `# ${job}.outputs: the files it wrote; .load("name") reads one`,
      'result'
    ].join('\n');
  }
  const files = saved.files ?? [];
  const why = saved.result?.reason ? ` (${saved.result.reason})` : '';
  const shown = files.slice(0, Private.SHOWN).join(', ');
  const more =
    files.length > Private.SHOWN ? `, … (${Private.files(files.length)})` : '';
  return [
    'from kale_ext import get_job',
    `# ${name} saved no result${why}; it wrote ${Private.files(files.length)}: ${shown}${more}`,
    `outputs = ${job}.outputs`,
    `# outputs.load(${JSON.stringify(files[0] ?? 'name')}) reads one`,
    'outputs'
  ].join('\n');
}

namespace Private {
  /** The files a cell's comment names at most. */
  export const SHOWN = 5;

  export function files(n: number): string {
    return `${n} output ${n === 1 ? 'file' : 'files'}`;
  }
}
