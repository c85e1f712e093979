import type { IDisposable } from '@lumino/disposable';

import type { KaleService } from '../api';
import type { IMetric, ISeries } from '../metrics/store';
import { MetricsStore } from '../metrics/store';

/**
 * The metrics of several jobs on one plot each: a metric's line per job
 * (its rank 0's values, else its lowest rank's), the job's place in the
 * list standing where a rank would, so the chart code draws and colours
 * them as it does ranks.
 */
export function combineMetrics(stores: MetricsStore[]): IMetric[] {
  const names: string[] = [];
  for (const store of stores) {
    for (const m of store.metrics) {
      if (!names.includes(m.name)) {
        names.push(m.name);
      }
    }
  }
  return names.map(name => {
    const series = new Map<number, ISeries>();
    let version = 0;
    stores.forEach((store, i) => {
      const metric = store.metric(name);
      if (!metric) {
        return;
      }
      version += metric.version;
      const ranks = [...metric.series.values()].sort((a, b) => a.rank - b.rank);
      const first = ranks[0];
      if (first) {
        series.set(i, { rank: i, points: first.points, latest: first.latest });
      }
    });
    return { name, series, version };
  });
}

/**
 * Reads the whole logs of each compared job (one after the other), for
 * their metric curves; a job still running is read as far as it got.
 */
export class CompareCurves implements IDisposable {
  constructor(options: {
    service: KaleService;
    jobs: string[];
    changed: () => void;
  }) {
    this.stores = options.jobs.map(() => new MetricsStore());
    this._service = options.service;
    this._jobs = options.jobs;
    this._changed = options.changed;
  }

  /** A store per job, in the jobs' order. */
  readonly stores: MetricsStore[];
  /** Jobs whose logs could not be read, with why. */
  readonly errors = new Map<string, string>();
  /** Whether every job's logs were read. */
  done = false;

  get isDisposed(): boolean {
    return this._abort.signal.aborted;
  }

  /**
   * The metrics, a line per job.
   */
  metrics(): IMetric[] {
    return combineMetrics(this.stores);
  }

  /**
   * Read the jobs' logs (again: what was read is dropped first).
   */
  async load(): Promise<void> {
    this.done = false;
    for (const [i, name] of this._jobs.entries()) {
      if (this.isDisposed) {
        return;
      }
      const store = new MetricsStore();
      try {
        await this._service.streamLogs(name, {
          follow: false,
          signal: this._abort.signal,
          onLines: lines => store.push(lines),
          retryDelay: () => 1000
        });
        this.errors.delete(name);
      } catch (reason) {
        this.errors.set(name, String((reason as Error)?.message ?? reason));
      }
      this.stores[i] = store;
      this._changed();
    }
    this.done = true;
    this._changed();
  }

  dispose(): void {
    this._abort.abort();
  }

  private _service: KaleService;
  private _jobs: string[];
  private _changed: () => void;
  private _abort = new AbortController();
}
