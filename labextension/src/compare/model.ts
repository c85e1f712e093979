import type { JSONValue } from '@lumino/coreutils';

import { formatValue } from '../metrics/format';
import { jobDuration, jobOptions, FinalMetrics } from '../panel/jobs/jobs-view';
import { formatDuration } from '../timeline';
import type { Kale } from '../types';

/**
 * Two or more jobs side by side, as the compare view shows them: their
 * parameters, resources, packages, image, runtime, notebook and source
 * hashes and final metrics, a row each, with the rows that differ marked.
 * Read from the jobs themselves (their provenance records the options
 * they were submitted with). Pure: the view draws what this computes.
 */

/**
 * One compared value: a cell per job.
 */
export interface ICompareRow {
  key: string;
  label: string;
  values: string[];
  /** Not every job has the same value. */
  differs: boolean;
}

/**
 * A group of rows (Parameters, Resources, ...).
 */
export interface ICompareSection {
  title: string;
  rows: ICompareRow[];
}

/**
 * How a value shows in a cell ('' when not set).
 */
export function show(value: JSONValue | undefined): string {
  if (value === undefined || value === null) {
    return '';
  }
  if (typeof value === 'string') {
    return value;
  }
  if (Array.isArray(value)) {
    return value.map(v => show(v)).join(', ');
  }
  return JSON.stringify(value);
}

function row(key: string, label: string, values: string[]): ICompareRow {
  return {
    key,
    label,
    values,
    differs: values.some(v => v !== values[0])
  };
}

/**
 * A provenance value (a hash shortened to 12 characters).
 */
function provenance(job: Kale.IJobInfo, key: string, short = false): string {
  const value = show(job.provenance?.[`kale-ext.io/${key}`]);
  return short && value.length > 12 ? value.slice(0, 12) : value;
}

function config(options: Kale.IJobOptions, kind: string, what: string) {
  const table = options.config?.[kind];
  return typeof table === 'object' && table !== null && !Array.isArray(table)
    ? show((table as Record<string, JSONValue>)[what])
    : '';
}

/**
 * The sections of the compare view for `jobs` (in their order).
 */
export function compareJobs(
  jobs: Kale.IJobInfo[],
  context: {
    now: number;
    metrics: (name: string) => FinalMetrics | undefined;
  }
): ICompareSection[] {
  const options = jobs.map(jobOptions);
  const each = (f: (job: Kale.IJobInfo, i: number) => string) =>
    jobs.map((job, i) => f(job, i));

  const names: string[] = [];
  for (const o of options) {
    for (const name of Object.keys(o.parameters ?? {})) {
      if (!names.includes(name)) {
        names.push(name);
      }
    }
  }
  const parameters = names.map(name =>
    row(
      `parameters.${name}`,
      name,
      options.map(o =>
        o.parameters && name in o.parameters
          ? show(o.parameters[name])
          : 'default'
      )
    )
  );

  const resources = [
    row(
      'nodes',
      'Nodes',
      each(j =>
        j.procs_per_node > 1
          ? `${j.num_nodes} × ${j.procs_per_node}`
          : `${j.num_nodes}`
      )
    ),
    row(
      'cpu',
      'CPU',
      options.map(o => show(o.cpu) || config(o, 'requests', 'cpu'))
    ),
    row(
      'memory',
      'Memory',
      options.map(o => show(o.memory) || config(o, 'requests', 'memory'))
    ),
    row(
      'gpu',
      'GPUs',
      options.map(o => show(o.gpu))
    ),
    row(
      'cpuLimit',
      'CPU limit',
      options.map(o => config(o, 'limits', 'cpu'))
    ),
    row(
      'memoryLimit',
      'Memory limit',
      options.map(o => config(o, 'limits', 'memory'))
    )
  ].filter(r => r.values.some(v => v !== ''));

  const environment = [
    row(
      'runtime',
      'Runtime',
      each(j => j.runtime)
    ),
    row(
      'backend',
      'Backend',
      each(j => j.backend)
    ),
    row(
      'image',
      'Image',
      options.map(o => show(o.image) || 'the runtime’s')
    ),
    row(
      'packages',
      'Packages',
      options.map(o =>
        o.packages ? [...o.packages].sort().join(', ') : 'detected'
      )
    ),
    row(
      'env',
      'Environment',
      options.map(o => Object.keys(o.env ?? {}).join(', '))
    ),
    row(
      'volumes',
      'Volumes',
      options.map(o => (o.volumes ?? []).join(', '))
    )
  ].filter(r => r.values.some(v => v !== ''));

  const source = [
    row(
      'notebook',
      'Notebook',
      each(j => provenance(j, 'notebook'))
    ),
    row(
      'notebookSha',
      'Notebook sha256',
      each(j => provenance(j, 'notebook-sha256', true))
    ),
    row(
      'sourceSha',
      'Source sha256',
      each(j => provenance(j, 'source-sha256', true))
    ),
    row(
      'function',
      'Function',
      each(j => provenance(j, 'function'))
    ),
    row(
      'version',
      'kale_ext',
      each(j => provenance(j, 'version'))
    )
  ].filter(r => r.values.some(v => v !== ''));

  const run = [
    row(
      'status',
      'Status',
      each(j => j.status_text ?? j.status)
    ),
    row(
      'duration',
      'Duration',
      each(j => {
        const d = jobDuration(j, context.now);
        return d === null ? '' : formatDuration(d);
      })
    ),
    row(
      'sweep',
      'Sweep',
      each(j => j.sweep ?? '')
    )
  ].filter(r => r.values.some(v => v !== ''));

  const finals = jobs.map(j => context.metrics(j.name));
  const metricNames: string[] = [];
  for (const m of finals) {
    for (const name of m?.keys() ?? []) {
      if (!metricNames.includes(name)) {
        metricNames.push(name);
      }
    }
  }
  const metrics = metricNames.map(name =>
    row(
      `metrics.${name}`,
      name,
      finals.map(m => {
        const v = m?.get(name);
        return v ? `${formatValue(v.value)} (step ${v.step})` : '';
      })
    )
  );

  return [
    { title: 'Parameters', rows: parameters },
    { title: 'Final metrics', rows: metrics },
    { title: 'Resources', rows: resources },
    { title: 'Environment', rows: environment },
    { title: 'Source', rows: source },
    { title: 'Run', rows: run }
  ].filter(s => s.rows.length > 0);
}

/**
 * Whether the generated function differs between the jobs (their source
 * hashes do).
 */
export function sourceChanged(jobs: Kale.IJobInfo[]): boolean {
  const hashes = new Set(
    jobs.map(j => provenance(j, 'source-sha256')).filter(Boolean)
  );
  return hashes.size > 1;
}
