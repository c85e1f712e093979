import { INF_TEXT, NAN_TEXT, SERIES_COLORS } from './constants';
import type { IMetric } from './store';

/**
 * A number for people: 4 significant digits, exponent form when very large
 * or small; NaN and ±inf as `NAN_TEXT` and `INF_TEXT` say.
 */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) {
    return NAN_TEXT;
  }
  if (!Number.isFinite(value)) {
    return value > 0 ? INF_TEXT : `-${INF_TEXT}`;
  }
  if (value === 0) {
    return '0';
  }
  const abs = Math.abs(value);
  if (abs >= 1e6 || abs < 1e-3) {
    return value.toExponential(2).replace(/\.?0+e/, 'e');
  }
  if (Number.isInteger(value)) {
    return String(value);
  }
  return String(Number(value.toPrecision(4)));
}

/**
 * The latest values of a metric in words, for its chart's accessible name:
 * "loss, latest: rank 0 0.31 at step 2, rank 1 0.3 at step 2".
 */
export function describeMetric(metric: IMetric): string {
  const parts = [...metric.series.values()].map(
    s =>
      `rank ${s.rank} ${formatValue(s.latest.value)} at step ${s.latest.step}`
  );
  return parts.length
    ? `${metric.name}, latest: ${parts.join(', ')}`
    : `${metric.name}: no values yet`;
}

/**
 * The class that gives a rank (or, without one, a node) its colour: its
 * chart line, its legend entry and its log lines'.
 */
export function seriesClass(rank: number): string {
  return `kale-ext-who-${rank % SERIES_COLORS.length}`;
}
