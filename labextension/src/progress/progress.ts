import { formatAge } from '../panel/shared/format';
import type { Kale } from '../types';

/**
 * A job's progress as the panel shows it: a bar with its percent and the
 * time left ("38 % · about 12 min left"), only while the job runs (a queued
 * or ended job shows its state, not a stale bar). Pure: the bar draws what
 * this computes.
 */
export interface IShownProgress {
  /** 0–100, for the bar's width (not rounded). */
  percent: number;
  /** The whole percent shown and read out (never 100 before the end). */
  value: number;
  /** "38 % · about 12 min left"; no ETA while the job gives none. */
  label: string;
  /** Where it came from and what it counts, for the hover. */
  title: string;
  source: Kale.IProgress['source'];
}

/**
 * Where progress came from, in words.
 */
export const SOURCE_LABELS: Record<Kale.IProgress['source'], string> = {
  report: 'kale_ext.report()',
  tqdm: 'a tqdm bar on rank 0',
  'epoch-line': 'the log’s “epoch N/M” lines',
  trainer: 'Kubeflow Trainer’s trainerStatus'
};

/**
 * The progress to show for a job, or null: none while it is not Running,
 * none when it never reported (or the server's value is not a number).
 */
export function shownProgress(
  job: Kale.IJobInfo | null | undefined,
  now: number = Date.now()
): IShownProgress | null {
  const progress = job?.progress;
  if (
    !job ||
    job.status !== 'Running' ||
    !progress ||
    typeof progress.percent !== 'number' ||
    !Number.isFinite(progress.percent)
  ) {
    return null;
  }
  const percent = Math.min(100, Math.max(0, progress.percent));
  const value = Math.floor(percent);
  const eta = formatEta(progress.eta_seconds);
  const label = eta ? `${value} % · ${eta}` : `${value} %`;
  const source = SOURCE_LABELS[progress.source] ?? String(progress.source);
  const parts = [`Progress from ${source}`];
  const counted = formatCount(progress);
  if (counted) {
    parts.push(counted);
  }
  parts.push(
    eta
      ? 'time left estimated from the recent rate'
      : 'no time left yet: the rate is not known well enough'
  );
  const age = formatAge(progress.updated, now);
  if (age) {
    parts.push(`updated ${age} ago`);
  }
  return {
    percent,
    value,
    label,
    title: parts.join(' · '),
    source: progress.source
  };
}

/**
 * The time left in words: "less than a minute left", "about 12 min left",
 * "about 2 h 5 min left", "about 3 days left"; '' when not known.
 */
export function formatEta(seconds: number | null | undefined): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    return '';
  }
  if (seconds < 45) {
    return 'less than a minute left';
  }
  const minutes = Math.max(1, Math.round(seconds / 60));
  if (minutes < 60) {
    return `about ${minutes} min left`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 48) {
    const rest = minutes % 60;
    return rest ? `about ${hours} h ${rest} min left` : `about ${hours} h left`;
  }
  return `about ${Math.round(hours / 24)} days left`;
}

/**
 * What it counts: "step 380 of 1,000", "epoch 38 of 60", "step 12"; ''
 * when it names no step.
 */
export function formatCount(progress: Kale.IProgress): string {
  const { step, total } = progress;
  if (typeof step !== 'number') {
    return '';
  }
  const unit = progress.unit === 'epoch' ? 'epoch' : 'step';
  const n = (v: number) => v.toLocaleString('en-US');
  return typeof total === 'number'
    ? `${unit} ${n(step)} of ${n(total)}`
    : `${unit} ${n(step)}`;
}
