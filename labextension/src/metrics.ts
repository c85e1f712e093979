import type { Kale } from './types';

/**
 * Live training metrics: the lines `kale_ext.report()` prints
 * (`KALE_METRIC {"step": 1, "rank": 0, "loss": 0.31}`), parsed into one
 * series per metric and rank, and the geometry of their charts. Pure: no DOM,
 * no React (the logs view draws what this computes).
 */

/**
 * What starts a metrics line (`kale_ext/metrics.py`: PREFIX).
 */
export const METRIC_PREFIX = 'KALE_METRIC ';

/**
 * Whether a log line was printed by `report()` (the logs view hides these by
 * default). Cheap: a prefix test, no parsing.
 */
export function isMetricLine(text: string): boolean {
  return text.startsWith(METRIC_PREFIX);
}

/**
 * One `report()` call.
 */
export interface IMetricRecord {
  /** The step it reported, or null when it gave none. */
  step: number | null;
  /** The rank it reported, or null when it gave none. */
  rank: number | null;
  /** The metrics by name; non-finite values (NaN, inf) are kept as such. */
  values: Map<string, number>;
}

/**
 * The record of a metrics line, or null for any other line (not one,
 * malformed JSON, not an object). Names other than `step` and `rank` whose
 * values are not numbers are left out; `NaN` and `Infinity`, which Python's
 * `json.dumps` writes, are read.
 */
export function parseMetric(text: string): IMetricRecord | null {
  if (!isMetricLine(text)) {
    return null;
  }
  const json = text.slice(METRIC_PREFIX.length).trim();
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    if (!/NaN|Infinity/.test(json)) {
      return null;
    }
    try {
      // Python's non-standard constants, quoted where they stand as values.
      data = JSON.parse(
        json.replace(
          /([:,[]\s*)(-?Infinity|NaN)(?=\s*[,}\]])/g,
          (_, before: string, word: string) => `${before}"${word}"`
        )
      );
    } catch {
      return null;
    }
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return null;
  }
  const record = data as Record<string, unknown>;
  const values = new Map<string, number>();
  for (const [name, value] of Object.entries(record)) {
    if (name === 'step' || name === 'rank') {
      continue;
    }
    const number = Private.number(value);
    if (number !== null) {
      values.set(name, number);
    }
  }
  const step = Private.number(record.step);
  const rank = record.rank;
  return {
    step: step !== null && Number.isFinite(step) ? step : null,
    rank:
      typeof rank === 'number' && Number.isInteger(rank) && rank >= 0
        ? rank
        : null,
    values
  };
}

/**
 * A point of a series.
 */
export interface IPoint {
  step: number;
  value: number;
}

/**
 * One rank's values of one metric, sorted by step.
 */
export interface ISeries {
  rank: number;
  points: IPoint[];
  /** The last value reported (NaN and inf too), at its step. */
  latest: IPoint;
}

/**
 * One metric: a series per rank.
 */
export interface IMetric {
  name: string;
  /** By rank. */
  series: Map<number, ISeries>;
  /** Incremented at every change: a cheap key for memoized charts. */
  version: number;
}

/**
 * The metrics of a job's log lines. Values are kept per metric and rank,
 * sorted by step; a series longer than `maxPoints` is thinned to half (its
 * minima and maxima kept), so memory stays bounded however long training
 * runs.
 */
export class MetricsStore {
  constructor(options: { maxPoints?: number } = {}) {
    this._maxPoints = Math.max(16, options.maxPoints ?? 20_000);
  }

  /** Incremented at every change. */
  get version(): number {
    return this._version;
  }

  /** The metrics, in the order they were first reported. */
  get metrics(): IMetric[] {
    return [...this._metrics.values()];
  }

  /** The metrics lines read so far (well-formed or not). */
  get lineCount(): number {
    return this._lines;
  }

  metric(name: string): IMetric | undefined {
    return this._metrics.get(name);
  }

  /**
   * Read log lines; the metrics lines among them are added. A record's own
   * `rank` decides its series; without one, the line's rank, else its node.
   * Returns whether anything was added.
   */
  push(lines: Kale.ILogLine[]): boolean {
    let added = false;
    for (const line of lines) {
      if (!isMetricLine(line.text)) {
        continue;
      }
      this._lines++;
      const record = parseMetric(line.text);
      if (!record) {
        continue;
      }
      const rank = record.rank ?? line.rank ?? line.node;
      for (const [name, value] of record.values) {
        this._add(name, rank, record.step, value);
        added = true;
      }
    }
    if (added) {
      this._version++;
    }
    return added;
  }

  clear(): void {
    this._metrics.clear();
    this._lines = 0;
    this._version++;
  }

  private _add(
    name: string,
    rank: number,
    step: number | null,
    value: number
  ): void {
    let metric = this._metrics.get(name);
    if (!metric) {
      metric = { name, series: new Map(), version: 0 };
      this._metrics.set(name, metric);
    }
    let series = metric.series.get(rank);
    const points = series?.points ?? [];
    // No step: the one after the last this series reported.
    const at =
      step ??
      (series ? (points.length ? points[points.length - 1].step + 1 : 0) : 0);
    const point = { step: at, value };
    if (!series) {
      series = { rank, points, latest: point };
      metric.series.set(rank, series);
      metric.series = new Map([...metric.series].sort((a, b) => a[0] - b[0]));
    }
    series.latest = point;
    metric.version++;
    if (!Number.isFinite(value)) {
      return; // shown as the latest value, not plotted
    }
    Private.insert(points, point);
    if (points.length > this._maxPoints) {
      series.points = downsample(points, Math.floor(this._maxPoints / 4));
    }
  }

  private _metrics = new Map<string, IMetric>();
  private _maxPoints: number;
  private _version = 0;
  private _lines = 0;
}

/**
 * At most about `2 * buckets` points that look like `points` when drawn: the
 * steps are cut into `buckets` equal ranges and each keeps its lowest and
 * highest value (in step order), so spikes survive; the first and last
 * points are always kept. `points` must be sorted by step.
 */
export function downsample(points: IPoint[], buckets: number): IPoint[] {
  const n = points.length;
  buckets = Math.max(1, Math.floor(buckets));
  if (n <= 2 * buckets + 2) {
    return points;
  }
  const first = points[0].step;
  const span = points[n - 1].step - first;
  const bucketOf =
    span > 0
      ? (i: number) =>
          Math.min(
            buckets - 1,
            Math.floor(((points[i].step - first) / span) * buckets)
          )
      : (i: number) => Math.floor((i * buckets) / n);
  const out: IPoint[] = [points[0]];
  let i = 1;
  while (i < n - 1) {
    const bucket = bucketOf(i);
    let lo = i;
    let hi = i;
    let j = i;
    for (; j < n - 1 && bucketOf(j) === bucket; j++) {
      if (points[j].value < points[lo].value) {
        lo = j;
      }
      if (points[j].value > points[hi].value) {
        hi = j;
      }
    }
    if (lo === hi) {
      out.push(points[lo]);
    } else {
      out.push(points[Math.min(lo, hi)], points[Math.max(lo, hi)]);
    }
    i = j;
  }
  out.push(points[n - 1]);
  return out;
}

/**
 * A number for people: 4 significant digits, exponent form when very large
 * or small; `NaN`, `inf`, `-inf` as Python prints them.
 */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) {
    return 'NaN';
  }
  if (!Number.isFinite(value)) {
    return value > 0 ? 'inf' : '-inf';
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
 * A chart's size and margins, in SVG user units.
 */
export interface IChartSize {
  width: number;
  height: number;
  /** Room for the y labels on the left, x labels below. */
  left: number;
  bottom: number;
  top: number;
  right: number;
}

export const CHART_SIZE: IChartSize = {
  width: 280,
  height: 120,
  left: 44,
  bottom: 18,
  top: 6,
  right: 8
};

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
 * each downsampled to about two points per horizontal unit at most.
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

namespace Private {
  export function number(value: unknown): number | null {
    if (typeof value === 'number') {
      return value;
    }
    if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') {
      return Number(value);
    }
    return null;
  }

  /**
   * Insert in step order; a point at the same step as the last replaces it.
   */
  export function insert(points: IPoint[], point: IPoint): void {
    const n = points.length;
    if (n === 0 || points[n - 1].step < point.step) {
      points.push(point);
      return;
    }
    if (points[n - 1].step === point.step) {
      points[n - 1] = point;
      return;
    }
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (points[mid].step <= point.step) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    points.splice(lo, 0, point);
  }
}
