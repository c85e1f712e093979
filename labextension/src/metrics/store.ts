import type { Kale } from '../types';
import { MAX_POINTS } from './constants';
import { downsample, IPoint } from './downsample';
import { isMetricLine, parseMetric } from './parse';

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
 * The metrics of a job's log lines, parsed into one series per metric and
 * rank. Values are kept sorted by step; a series longer than `maxPoints` is
 * thinned to a quarter (its minima and maxima kept), so memory stays
 * bounded however long training runs. Pure: no DOM, no React.
 */
export class MetricsStore {
  constructor(options: { maxPoints?: number } = {}) {
    this._maxPoints = Math.max(16, options.maxPoints ?? MAX_POINTS);
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

namespace Private {
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
