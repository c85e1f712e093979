import { CHART_SIZE, IChartSize } from './constants';
import { downsample } from './downsample';
import { formatValue } from './format';
import type { IMetric } from './store';

/**
 * What a chart draws: the plot area, ticks, and a path per rank.
 */
export interface IChartLayout {
  size: IChartSize;
  /** The steps shown (x). */
  x: { min: number; max: number };
  /** The values shown (y). */
  y: { min: number; max: number };
  /** Tick positions, in user units, with their labels. */
  yTicks: { y: number; label: string }[];
  xTicks: { x: number; label: string }[];
  lines: {
    rank: number;
    /** An SVG path (`M x y L x y ...`), empty when nothing is plotted. */
    d: string;
    /** The last plotted point (a dot marks it), or null. */
    last: { x: number; y: number } | null;
    /** Points drawn, after downsampling. */
    drawn: number;
  }[];
}

/**
 * The geometry of a metric's chart: x = step, y = value, one line per rank,
 * each downsampled to about two points per horizontal unit at most. Pure:
 * the logs view draws what this computes.
 */
export function chartLayout(
  metric: IMetric,
  size: IChartSize = CHART_SIZE
): IChartLayout {
  const plotW = size.width - size.left - size.right;
  const plotH = size.height - size.top - size.bottom;
  const series = [...metric.series.values()];
  const shown = series.map(s => downsample(s.points, Math.ceil(plotW / 2)));
  let xMin = Infinity;
  let xMax = -Infinity;
  let yMin = Infinity;
  let yMax = -Infinity;
  for (const points of shown) {
    if (points.length) {
      xMin = Math.min(xMin, points[0].step);
      xMax = Math.max(xMax, points[points.length - 1].step);
    }
    for (const p of points) {
      yMin = Math.min(yMin, p.value);
      yMax = Math.max(yMax, p.value);
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
  const ticks = niceTicks(yMin, yMax, 3).filter(t => t >= yMin && t <= yMax);
  const sx = (step: number) =>
    size.left + ((step - xMin) / (xMax - xMin)) * plotW;
  const sy = (value: number) =>
    size.top + (1 - (value - yMin) / (yMax - yMin)) * plotH;
  const r = (v: number) => Math.round(v * 10) / 10;
  const xTicks = niceTicks(xMin, xMax, 4, true).filter(
    t => t >= xMin && t <= xMax
  );
  return {
    size,
    x: { min: xMin, max: xMax },
    y: { min: yMin, max: yMax },
    yTicks: ticks.map(t => ({ y: r(sy(t)), label: formatValue(t) })),
    xTicks: xTicks.map(t => ({ x: r(sx(t)), label: formatValue(t) })),
    lines: series.map((s, k) => {
      const points = shown[k];
      const d = points
        .map((p, i) => `${i ? 'L' : 'M'}${r(sx(p.step))} ${r(sy(p.value))}`)
        .join(' ');
      const end = points[points.length - 1];
      return {
        rank: s.rank,
        d,
        last: end ? { x: r(sx(end.step)), y: r(sy(end.value)) } : null,
        drawn: points.length
      };
    })
  };
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
