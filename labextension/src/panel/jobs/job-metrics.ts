import type { IDisposable } from '@lumino/disposable';

import type { KaleService } from '../../api';
import { MetricsStore } from '../../metrics/store';
import type { Kale } from '../../types';
import type { FinalMetrics } from './jobs-view';

/**
 * Lines read from the end of each node's log for a job's final metrics.
 */
const TAIL = 200;

/**
 * The final metrics of ended jobs, read once each from the end of their
 * logs (`logs?follow=0&tail=200`), one job at a time: a job that ended
 * does not change, so nothing is read twice, and the list stays cheap
 * however many jobs it shows.
 */
export class FinalMetricsCache implements IDisposable {
  constructor(options: FinalMetricsCache.IOptions) {
    this._service = options.service;
    this._changed = options.changed;
    this._maxJobs = options.maxJobs ?? 500;
  }

  get isDisposed(): boolean {
    return this._abort.signal.aborted;
  }

  /**
   * The final metrics of a job: undefined until read (or while it runs).
   */
  get(name: string): FinalMetrics | undefined {
    return this._cache.get(name);
  }

  /**
   * Read the final metrics of those of `jobs` that ended and are not read.
   */
  want(jobs: Kale.IJobInfo[]): void {
    for (const job of jobs) {
      const ended = job.status === 'Complete' || job.status === 'Failed';
      const known =
        this._cache.has(job.name) ||
        this._queue.includes(job.name) ||
        this._reading === job.name;
      if (ended && !known) {
        this._queue.push(job.name);
      }
    }
    void this._next();
  }

  dispose(): void {
    this._abort.abort();
  }

  private async _next(): Promise<void> {
    if (this._reading !== null || this.isDisposed) {
      return;
    }
    const name = this._queue.shift();
    if (name === undefined) {
      return;
    }
    this._reading = name;
    const store = new MetricsStore();
    try {
      await this._service.streamLogs(name, {
        follow: false,
        tail: TAIL,
        signal: this._abort.signal,
        onLines: lines => store.push(lines),
        retryDelay: () => 1000
      });
    } catch {
      // unreadable (deleted meanwhile): no metrics, not asked again
    }
    this._reading = null;
    if (this.isDisposed) {
      return;
    }
    this._cache.set(name, Private.final(store));
    if (this._cache.size > this._maxJobs) {
      this._cache.delete(this._cache.keys().next().value!);
    }
    this._changed();
    void this._next();
  }

  private _service: KaleService;
  private _changed: () => void;
  private _maxJobs: number;
  private _cache = new Map<string, FinalMetrics>();
  private _queue: string[] = [];
  /** The job whose log is being read, or null. */
  private _reading: string | null = null;
  private _abort = new AbortController();
}

export namespace FinalMetricsCache {
  export interface IOptions {
    service: KaleService;
    /** Called when a job's metrics were read. */
    changed: () => void;
    /** Jobs remembered at most (default 500). */
    maxJobs?: number;
  }
}

namespace Private {
  /**
   * Each metric's last value: rank 0's, else the lowest rank's.
   */
  export function final(store: MetricsStore): FinalMetrics {
    const out: FinalMetrics = new Map();
    for (const metric of store.metrics) {
      const first = [...metric.series.values()][0];
      if (first) {
        out.set(metric.name, {
          value: first.latest.value,
          step: first.latest.step
        });
      }
    }
    return out;
  }
}
