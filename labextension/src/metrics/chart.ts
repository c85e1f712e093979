import { CHART_SIZE, IChartSize } from './constants';
import { downsample, IPoint } from './downsample';
import { formatValue } from './format';
import type { IMetric, ISeries } from './store';
import { meanSeries } from './summary';

/**
 * A line of a chart: a rank's, or the ranks' mean (`rank` null).
 */
export interface IChartLine {
  rank: number | null;
  /** An SVG path (`M x y L x y ...`), empty when nothing is plotted. */
  d: string;
  /** The last plotted point (a dot marks a rank's), or null. */
  last: { x: number; y: number } | null;
  /** Points drawn, after downsampling. */
  drawn: number;
}

/**
 * How a chart's y axis maps values.
 */
export type ChartScale = 'linear' | 'log';

/**
 * What a chart draws: the plot area, ticks, a path per rank and their mean.
 */
export interface IChartLayout {
  size: IChartSize;
  /** The scale drawn (linear when log was asked for values not above 0). */
  scale: ChartScale;
  /** Why the scale asked for is not the one drawn ('' when it is). */
  note: string;
  /** The steps shown (x). */
  x: { min: number; max: number };
  /** The values shown (y), in the scale's units (log10 of them on a log axis). */
  y: { min: number; max: number };
  /** Tick positions, in user units, with their labels. */
  yTicks: { y: number; label: string }[];
  xTicks: { x: number; label: string }[];
  lines: IChartLine[];
  /** The mean of the ranks (two or more), or null. */
  mean: IChartLine | null;
}

/**
 * The geometry of a metric's chart: x = step, y = value (linear or log),
 * one line per rank and their mean, each downsampled to about two points
 * per horizontal unit at most. Pure: the logs view draws what this
 * computes.
 */
export function chartLayout(
  metric: IMetric,
  size: IChartSize = CHART_SIZE,
  options: { scale?: ChartScale } = {}
): IChartLayout {
  const plotW = size.width - size.left - size.right;
  const plotH = size.height - size.top - size.bottom;
  const series = [...metric.series.values()];
  const note = options.scale === 'log' ? logScaleNote(metric.name, series) : '';
  const log = options.scale === 'log' && !note;
  const fy = log ? Math.log10 : (v: number) => v;
  const buckets = Math.ceil(plotW / 2);
  const shown = series.map(s => downsample(s.points, buckets));
  const mean = downsample(meanSeries(metric), buckets);
  let xMin = Infinity;
  let xMax = -Infinity;
  let yMin = Infinity;
  let yMax = -Infinity;
  for (const points of [...shown, mean]) {
    if (points.length) {
      xMin = Math.min(xMin, points[0].step);
      xMax = Math.max(xMax, points[points.length - 1].step);
    }
    for (const p of points) {
      yMin = Math.min(yMin, fy(p.value));
      yMax = Math.max(yMax, fy(p.value));
    }
  }
  if (xMin > xMax) {
    xMin = 0;
    xMax = 1;
  }
  if (xMin === xMax) {
    xMin -= 1;
    xMax += 1;
  }
  if (yMin > yMax) {
    yMin = 0;
    yMax = 1;
  }
  if (yMin === yMax) {
    const pad = Math.abs(yMin) * 0.1 || 1;
    yMin -= pad;
    yMax += pad;
  }
  const pad = (yMax - yMin) * 0.05;
  yMin -= pad;
  yMax += pad;
  const base = {
    size,
    x: { min: xMin, max: xMax },
    y: { min: yMin, max: yMax }
  };
  const scale: ChartScale = log ? 'log' : 'linear';
  const sx = (step: number) => r(toX({ ...base, scale }, step));
  const sy = (value: number) => r(toY({ ...base, scale }, value));
  const yTicks = log
    ? logTicks(yMin, yMax)
    : niceTicks(yMin, yMax, Math.max(3, Math.round(plotH / 40))).filter(
        t => t >= yMin && t <= yMax
      );
  const xTicks = niceTicks(
    xMin,
    xMax,
    Math.max(2, Math.round(plotW / 80)),
    true
  ).filter(t => t >= xMin && t <= xMax);
  const line = (rank: number | null, points: IPoint[]): IChartLine => {
    const end = points[points.length - 1];
    return {
      rank,
      d: points
        .map((p, i) => `${i ? 'L' : 'M'}${sx(p.step)} ${sy(p.value)}`)
        .join(' '),
      last: end ? { x: sx(end.step), y: sy(end.value) } : null,
      drawn: points.length
    };
  };
  return {
    ...base,
    scale,
    note,
    yTicks: yTicks.map(t => ({ y: sy(t), label: formatValue(t) })),
    xTicks: xTicks.map(t => ({ x: sx(t), label: formatValue(t) })),
    lines: series.map((s, k) => line(s.rank, shown[k])),
    mean: mean.length ? line(null, mean) : null
  };
}

type Frame = Pick<IChartLayout, 'size' | 'x' | 'y' | 'scale'>;

/**
 * A step's horizontal position in a chart, in user units.
 */
export function toX(layout: Frame, step: number): number {
  const { size, x } = layout;
  const plotW = size.width - size.left - size.right;
  return size.left + ((step - x.min) / (x.max - x.min)) * plotW;
}

/**
 * A value's vertical position in a chart, in user units.
 */
export function toY(layout: Frame, value: number): number {
  const { size, y } = layout;
  const plotH = size.height - size.top - size.bottom;
  const v = layout.scale === 'log' ? Math.log10(value) : value;
  return size.top + (1 - (v - y.min) / (y.max - y.min)) * plotH;
}

/**
 * The step at a horizontal position (not rounded to a reported one).
 */
export function stepAt(layout: Frame, px: number): number {
  const { size, x } = layout;
  const plotW = size.width - size.left - size.right;
  return x.min + ((px - size.left) / plotW) * (x.max - x.min);
}

/**
 * Why a metric cannot be drawn on a log axis ('' when it can).
 */
export function logScaleNote(name: string, series: ISeries[]): string {
  let lowest = Infinity;
  for (const s of series) {
    for (const p of s.points) {
      lowest = Math.min(lowest, p.value);
    }
  }
  return lowest > 0
    ? ''
    : `Log scale needs values above 0: ${name} has ${formatValue(lowest)}. Drawn linear.`;
}

/**
 * Tick values for a log axis over [10^low, 10^high]: the powers of ten
 * within it (every 2nd, 5th, ... one, at most 6), else (less than a
 * decade) round linear values.
 */
export function logTicks(low: number, high: number): number[] {
  const decades: number[] = [];
  for (let k = Math.ceil(low - 1e-9); k <= Math.floor(high + 1e-9); k++) {
    decades.push(k);
  }
  if (decades.length >= 2) {
    const every =
      [1, 2, 5, 10, 20, 50, 100].find(e => decades.length <= 6 * e) ?? 100;
    return decades
      .filter(k => k % every === 0)
      .map(k => Number(Math.pow(10, k).toPrecision(12)));
  }
  const lo = Math.pow(10, low);
  const hi = Math.pow(10, high);
  return niceTicks(lo, hi, 4).filter(t => t > 0 && t >= lo && t <= hi);
}

function r(v: number): number {
  return Math.round(v * 10) / 10;
}

/**
 * About `count` round tick values covering [min, max] (1, 2 or 5 times a
 * power of ten apart); whole numbers only with `integers`.
 */
export function niceTicks(
  min: number,
  max: number,
  count: number,
  integers = false
): number[] {
  const span = max - min;
  if (!(span > 0) || !Number.isFinite(span)) {
    return [min];
  }
  const raw = span / Math.max(1, count);
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  let step =
    [1, 2, 5, 10].map(m => m * power).find(s => s >= raw) ?? 10 * power;
  if (integers) {
    step = Math.max(1, Math.round(step));
  }
  const start = Math.floor(min / step) * step;
  const ticks: number[] = [];
  for (let t = start; t <= max + step * 1e-9; t += step) {
    ticks.push(Number(t.toPrecision(12)));
    if (ticks.length > 50) {
      break;
    }
  }
  if (ticks[ticks.length - 1] < max) {
    ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)));
  }
  return ticks;
}
