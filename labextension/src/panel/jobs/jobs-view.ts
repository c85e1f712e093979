import type { JSONValue } from '@lumino/coreutils';

import { JOB_STATUSES } from '../../contract';
import { lowerIsBetter } from '../../metrics/summary';
import type { Kale } from '../../types';

/**
 * The jobs list as the user arranges it: which jobs (this notebook's or
 * all), the columns (state, name, key parameters, duration, final metric)
 * and the order. Pure: the view draws what this computes.
 */

/**
 * The sortable columns.
 */
export type JobColumn =
  'state' | 'name' | 'parameters' | 'duration' | 'metric' | 'created';

export const COLUMN_LABELS: Record<JobColumn, string> = {
  state: 'State',
  name: 'Name',
  parameters: 'Parameters',
  duration: 'Duration',
  metric: 'Final metric',
  created: 'Started'
};

/**
 * How the user arranged the list (kept across reloads).
 */
export interface IJobsView {
  /** This notebook's jobs only, or all. */
  filter: 'notebook' | 'all';
  /** Only the jobs in this state (one of STATUS_FILTERS), or all: null. */
  status: StatusFilter | null;
  /** Only the jobs whose name holds this text (any case), or all: ''. */
  query: string;
  sort: JobColumn;
  descending: boolean;
  /** The metric the metric column shows (null: the first one known). */
  metric: string | null;
}

export const DEFAULT_VIEW: IJobsView = {
  filter: 'notebook',
  status: null,
  query: '',
  sort: 'created',
  descending: true,
  metric: null
};

/**
 * A kept arrangement as read back (from an older version, or edited): each
 * field that is not a valid value of its own is the default's.
 */
export function restoredView(kept: Partial<IJobsView> | undefined): IJobsView {
  const k: Record<string, unknown> = { ...kept };
  const valid = <T>(value: unknown, ok: (v: unknown) => boolean, or: T): T =>
    ok(value) ? (value as T) : or;
  return {
    filter: valid(
      k.filter,
      v => v === 'notebook' || v === 'all',
      DEFAULT_VIEW.filter
    ),
    status: valid(
      k.status,
      v => typeof v === 'string' && STATUS_FILTERS.includes(v),
      DEFAULT_VIEW.status
    ),
    query: valid(k.query, v => typeof v === 'string', DEFAULT_VIEW.query),
    sort: valid(
      k.sort,
      v => typeof v === 'string' && v in COLUMN_LABELS,
      DEFAULT_VIEW.sort
    ),
    descending: valid(
      k.descending,
      v => typeof v === 'boolean',
      DEFAULT_VIEW.descending
    ),
    metric: valid(
      k.metric,
      v => v === null || typeof v === 'string',
      DEFAULT_VIEW.metric
    )
  };
}

/**
 * A job's final metrics, by name (rank 0's last values, else the lowest
 * rank's), with the step they were reported at.
 */
export type FinalMetrics = Map<string, { value: number; step: number }>;

/**
 * One row of the list.
 */
export interface IJobRow {
  job: Kale.IJobInfo;
  /** The parameters it was given (`epochs=1, lr=0.001`). */
  parameters: string;
  /** Milliseconds from its start to its end (or now), null if unknown. */
  duration: number | null;
  /** The chosen metric's final value, or null (not known, not reported). */
  metric: number | null;
}

/**
 * The notebook a job was submitted from (its path below the server root).
 */
export function notebookOf(job: Kale.IJobInfo): string | null {
  const path = job.provenance?.['kale-ext.io/notebook'];
  return typeof path === 'string' ? path : null;
}

/**
 * What a job was given: the options of its submit, from its provenance.
 */
export function jobOptions(job: Kale.IJobInfo): Kale.IJobOptions {
  const raw = job.provenance?.['kale-ext.io/options'];
  let options: unknown = raw;
  if (typeof raw === 'string') {
    try {
      options = JSON.parse(raw);
    } catch {
      return {};
    }
  }
  return typeof options === 'object' && options !== null
    ? (options as Kale.IJobOptions)
    : {};
}

/**
 * The parameters a job was given, as `name=value` (values as typed).
 */
export function keyParameters(job: Kale.IJobInfo): string {
  const parameters: unknown = jobOptions(job).parameters;
  if (typeof parameters !== 'object' || parameters === null) {
    return '';
  }
  return Object.entries(parameters as Record<string, JSONValue>)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

/**
 * How long a job ran (or has been running), in ms; null when not known.
 */
export function jobDuration(job: Kale.IJobInfo, now: number): number | null {
  const start = job.created ? Date.parse(job.created) : NaN;
  if (Number.isNaN(start)) {
    return null;
  }
  const ended = job.finished ? Date.parse(job.finished) : NaN;
  const end = Number.isNaN(ended)
    ? job.status === 'Complete' || job.status === 'Failed'
      ? NaN
      : now
    : ended;
  return Number.isNaN(end) ? null : Math.max(0, end - start);
}

/**
 * The names of the metrics the jobs reported, in the order first seen.
 */
export function metricNames(metrics: Iterable<FinalMetrics>): string[] {
  const names: string[] = [];
  for (const m of metrics) {
    for (const name of m.keys()) {
      if (!names.includes(name)) {
        names.push(name);
      }
    }
  }
  return names;
}

/**
 * The states a list can be narrowed to, as `kale-ext jobs --status` names
 * them (the server's contract): `running` holds the stalled ones, `stopped`
 * the failed ones someone stopped (not among `failed`).
 */
export const STATUS_FILTERS = JOB_STATUSES;

/** One of STATUS_FILTERS. */
export type StatusFilter = string;

/**
 * Whether a job is in a state (`kale-ext jobs --status` does the same).
 */
export function inStatus(job: Kale.IJobInfo, status: StatusFilter): boolean {
  if (status === 'stalled') {
    return job.status === 'Running' && typeof job.stalled_after === 'number';
  }
  const state =
    job.status_text === 'Stopped' ? 'stopped' : job.status.toLowerCase();
  return state === status;
}

/**
 * Whether a job's name holds `query` (any case; spaces around it ignored).
 */
export function nameMatches(job: Kale.IJobInfo, query: string): boolean {
  const wanted = query.trim().toLowerCase();
  return !wanted || job.name.toLowerCase().includes(wanted);
}

/**
 * The jobs of the chosen notebook (or all), in the chosen state, whose name
 * holds the text typed: what the list shows, before it is sorted.
 */
export function shownJobs(
  jobs: Kale.IJobInfo[],
  view: IJobsView,
  notebook: string | null
): Kale.IJobInfo[] {
  return jobs.filter(
    job =>
      (view.filter !== 'notebook' ||
        !notebook ||
        notebookOf(job) === notebook) &&
      (view.status === null || inStatus(job, view.status)) &&
      nameMatches(job, view.query)
  );
}

/**
 * The rows to show: filtered, with their columns, in the chosen order.
 */
export function jobRows(
  jobs: Kale.IJobInfo[],
  view: IJobsView,
  context: {
    notebook: string | null;
    now: number;
    metrics: (name: string) => FinalMetrics | undefined;
    metric: string | null;
  }
): IJobRow[] {
  const shown = shownJobs(jobs, view, context.notebook);
  const rows: IJobRow[] = shown.map(job => {
    const final = context.metric
      ? context.metrics(job.name)?.get(context.metric)
      : undefined;
    return {
      job,
      parameters: keyParameters(job),
      duration: jobDuration(job, context.now),
      metric: final?.value ?? null
    };
  });
  const sign = view.descending ? -1 : 1;
  // The metric goes best first (not descending), by the same rule as the
  // charts: lowest first for a loss-like name, else highest first.
  const best =
    context.metric && !lowerIsBetter(context.metric)
      ? (row: IJobRow) => (row.metric === null ? null : -row.metric)
      : Private.KEYS.metric;
  const key = view.sort === 'metric' ? best : Private.KEYS[view.sort];
  return rows
    .map((row, i) => ({ row, i }))
    .sort((a, b) => {
      const x = key(a.row);
      const y = key(b.row);
      // Rows without a value go last, whichever the direction.
      if (x === null || y === null) {
        return x === y ? a.i - b.i : x === null ? 1 : -1;
      }
      const order = x < y ? -1 : x > y ? 1 : 0;
      return order * sign || a.i - b.i;
    })
    .map(({ row }) => row);
}

namespace Private {
  const STATES: Record<string, number> = {
    Failed: 0,
    Running: 1,
    Queued: 2,
    Created: 3,
    Complete: 4
  };

  export const KEYS: Record<
    JobColumn,
    (row: IJobRow) => number | string | null
  > = {
    state: row => STATES[row.job.status] ?? 5,
    name: row => row.job.name,
    parameters: row => row.parameters || null,
    duration: row => row.duration,
    metric: row => row.metric,
    created: row => (row.job.created ? Date.parse(row.job.created) : null)
  };
}
