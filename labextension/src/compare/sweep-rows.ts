import type { JSONValue } from '@lumino/coreutils';

import { lowerIsBetter } from '../metrics/summary';
import type { Kale } from '../types';

/**
 * A sweep's trials as its view lists them: sorted by the metric (best
 * first by default, the sweep's goal deciding which end is best) or by
 * number, the best trial marked, a trial stopped early shown as such.
 * Pure: the view draws what this computes.
 */

export type TrialSort = 'metric' | 'number' | 'status';

export interface ITrialSort {
  by: TrialSort;
  /** Best (or first) at the top when false. */
  reversed: boolean;
}

export const DEFAULT_TRIAL_SORT: ITrialSort = { by: 'metric', reversed: false };

/**
 * How a trial's status reads: `Stopped early` by the sweep, `Stopped`
 * when someone stopped its job (its reason says who).
 */
export function trialStatusText(
  status: Kale.TrialStatus,
  reason?: string | null
): string {
  if (status !== 'Stopped') {
    return status;
  }
  return reason?.startsWith('stopped by ') ? 'Stopped' : 'Stopped early';
}

/**
 * Whether the sweep's best value is its lowest.
 */
export function goalIsMin(sweep: Kale.ISweep): boolean {
  if (sweep.goal) {
    return sweep.goal === 'min';
  }
  return sweep.metric ? lowerIsBetter(sweep.metric) : false;
}

/**
 * The trial's values as `lr=0.001, batch=32`.
 */
export function trialParameters(parameters: {
  [name: string]: JSONValue;
}): string {
  return Object.entries(parameters)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

const STATUS_ORDER: Record<string, number> = {
  Running: 0,
  Pending: 1,
  Complete: 2,
  Stopped: 3,
  Cancelled: 4,
  Failed: 5
};

/**
 * Whether the sweep can still be cancelled: not once it has ended
 * (Complete, Failed) or was cancelled. An Interrupted sweep (its driver
 * gone) can.
 */
export function canCancel(sweep: Kale.ISweep): boolean {
  return !['Complete', 'Failed', 'Cancelled'].includes(sweep.status);
}

/**
 * What cancelling the sweep does, as its confirm dialog asks it.
 */
export function cancelText(sweep: Kale.ISweep): string {
  const running = sweep.trials.filter(
    t => t.status === 'Running' || t.status === 'Pending'
  ).length;
  const stopped =
    running === 0
      ? 'No trial is running.'
      : `Its ${running === 1 ? 'running trial is' : `${running} running trials are`} stopped and kept (reading Cancelled, logs and outputs stay).`;
  return `Cancel sweep ${sweep.name}? No more trials start. ${stopped} Trials that ended stay as they are.`;
}

/**
 * The trials in the chosen order; trials without a metric last.
 */
export function sortTrials(
  sweep: Kale.ISweep,
  sort: ITrialSort
): Kale.ISweepTrial[] {
  const min = goalIsMin(sweep);
  const sign = sort.reversed ? -1 : 1;
  const key = (t: Kale.ISweepTrial): number | null => {
    switch (sort.by) {
      case 'metric':
        return t.metric === null ||
          t.metric === undefined ||
          Number.isNaN(t.metric)
          ? null
          : min
            ? t.metric
            : -t.metric;
      case 'status':
        return STATUS_ORDER[t.status] ?? 6;
      default:
        return t.number;
    }
  };
  return sweep.trials
    .map((trial, i) => ({ trial, i }))
    .sort((a, b) => {
      const x = key(a.trial);
      const y = key(b.trial);
      if (x === null || y === null) {
        return x === y ? a.trial.number - b.trial.number : x === null ? 1 : -1;
      }
      return (x - y) * sign || a.trial.number - b.trial.number;
    })
    .map(({ trial }) => trial);
}

/**
 * A line about the sweep's progress, as the server counts it (`10 of 12
 * complete; 2 failed` · best ...): every planned trial counted, those
 * failed, stopped, cancelled and never started said.
 */
export function sweepProgress(sweep: Kale.ISweep): string {
  const best = sweep.trials.find(t => t.best);
  const parts = [sweep.tally ?? `${sweep.trials.length} trials`];
  if (best) {
    parts.push(`best ${best.job} (${trialParameters(best.parameters)})`);
  }
  return parts.join(' · ');
}
