import { LOWER_IS_BETTER } from './constants';
import type { IPoint } from './downsample';
import type { IMetric } from './store';

/**
 * Whether a metric's best value is its lowest: its name has a word of
 * `LOWER_IS_BETTER` (words split at non-letters and camelCase humps), as
 * `kale_ext/metrics.py: lower_is_better` decides.
 */
export function lowerIsBetter(name: string): boolean {
  const words =
    name
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .match(/[a-z]+/g) ?? [];
  return words.some(word => LOWER_IS_BETTER.includes(word));
}

/**
 * The best of a metric's finite points (the earliest of equals), or null.
 */
export function bestPoint(name: string, points: IPoint[]): IPoint | null {
  const sign = lowerIsBetter(name) ? 1 : -1;
  let best: IPoint | null = null;
  for (const p of points) {
    if (
      Number.isFinite(p.value) &&
      (best === null || sign * p.value < sign * best.value)
    ) {
      best = p;
    }
  }
  return best;
}

/**
 * The mean of the ranks at each step that all of them span (a rank's value
 * between two of its steps is interpolated); empty with fewer than two
 * ranks.
 */
export function meanSeries(metric: IMetric): IPoint[] {
  const ranks = [...metric.series.values()]
    .map(s => s.points)
    .filter(points => points.length > 0);
  if (ranks.length < 2) {
    return [];
  }
  const first = Math.max(...ranks.map(p => p[0].step));
  const last = Math.min(...ranks.map(p => p[p.length - 1].step));
  const steps = new Set<number>();
  for (const points of ranks) {
    for (const p of points) {
      if (p.step >= first && p.step <= last) {
        steps.add(p.step);
      }
    }
  }
  const cursors = ranks.map(() => 0);
  return [...steps]
    .sort((a, b) => a - b)
    .map(step => {
      let total = 0;
      ranks.forEach((points, k) => {
        let i = cursors[k];
        while (points[i].step < step) {
          i++;
        }
        cursors[k] = i;
        const b = points[i];
        if (b.step === step || i === 0) {
          total += b.value;
        } else {
          const a = points[i - 1];
          total +=
            a.value +
            ((b.value - a.value) * (step - a.step)) / (b.step - a.step);
        }
      });
      return { step, value: total / ranks.length };
    });
}

/**
 * A metric reported once per rank: shown as a number, not a chart.
 */
export interface ISingleValue {
  /** The ranks' mean (the value itself for one rank). */
  value: number;
  /** The step, when every rank reported at the same one. */
  step: number | null;
  ranks: { rank: number; value: number; step: number }[];
}

/**
 * The single value of a metric that has at most one plotted point per rank
 * (and some value), else null: a chart of one dot says less than a number.
 */
export function singleValue(metric: IMetric): ISingleValue | null {
  const series = [...metric.series.values()];
  if (series.length === 0 || series.some(s => s.points.length > 1)) {
    return null;
  }
  const ranks = series.map(s => ({
    rank: s.rank,
    value: s.latest.value,
    step: s.latest.step
  }));
  const steps = new Set(ranks.map(r => r.step));
  return {
    value: ranks.reduce((sum, r) => sum + r.value, 0) / ranks.length,
    step: steps.size === 1 ? ranks[0].step : null,
    ranks
  };
}
