import type { IDisposable } from '@lumino/disposable';

import type { KaleService } from '../../api';
import { CappedSet } from '../../capped';
import type { Kale } from '../../types';
import { readMetrics } from './job-metrics';
import type { FinalMetrics } from './jobs-view';

/**
 * The latest metrics of running jobs, read again from the end of their logs
 * (`logs?follow=0&tail=200`) every few seconds while they run: one job at a
 * time, each at most every `interval`, the first `maxJobs` running jobs
 * listed only, so a list of many running jobs costs the server one short
 * read at a time. A read that finds no metric (the last lines held none)
 * keeps what the one before found.
 */
export class LiveMetrics implements IDisposable {
  constructor(options: LiveMetrics.IOptions) {
    this._read =
      options.read ??
      ((name, signal) => readMetrics(options.service!, name, signal));
    this._changed = options.changed;
    this._interval = options.interval ?? 5000;
    this._maxJobs = options.maxJobs ?? 10;
    this._now = options.now ?? Date.now;
    this._gone = new CappedSet(options.maxForgotten ?? 500);
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** A running job's latest metrics: undefined until read. */
  get(name: string): FinalMetrics | undefined {
    return this._values.get(name);
  }

  /**
   * The jobs listed now: read those running that are due; forget those
   * that no longer run (their final metrics are read once they end).
   */
  want(jobs: Kale.IJobInfo[]): void {
    const running = jobs
      .filter(job => job.status === 'Running')
      .slice(0, this._maxJobs)
      .map(job => job.name);
    const kept = new Set(running);
    for (const name of [...this._values.keys(), ...this._last.keys()]) {
      if (!kept.has(name)) {
        this._values.delete(name);
        this._last.delete(name);
      }
    }
    this._queue = this._queue.filter(name => kept.has(name));
    const now = this._now();
    for (const name of running) {
      const due = now - (this._last.get(name) ?? -Infinity) >= this._interval;
      if (due && !this._queue.includes(name) && this._reading?.name !== name) {
        this._queue.push(name);
      }
    }
    void this._next();
  }

  /**
   * A job about to be deleted: not read again; resolves once no read of it
   * is on its way.
   */
  async forget(name: string): Promise<void> {
    this._queue = this._queue.filter(n => n !== name);
    this._values.delete(name);
    this._last.delete(name);
    this._gone.add(name);
    if (this._reading?.name === name) {
      this._reading.abort.abort();
      await this._reading.done;
    }
  }

  /** The delete failed: the job is read again while it runs. */
  unforget(name: string): void {
    this._gone.delete(name);
  }

  dispose(): void {
    this._disposed = true;
    this._reading?.abort.abort();
    this._queue = [];
  }

  private async _next(): Promise<void> {
    if (this._reading !== null || this._disposed) {
      return;
    }
    const name = this._queue.shift();
    if (name === undefined) {
      return;
    }
    if (this._gone.has(name)) {
      return this._next();
    }
    this._last.set(name, this._now());
    const abort = new AbortController();
    const done = this._read(name, abort.signal).catch(
      () => new Map() as FinalMetrics
    );
    this._reading = { name, abort, done };
    const found = await done;
    this._reading = null;
    if (this._disposed) {
      return;
    }
    if (found.size && this._last.has(name) && !this._gone.has(name)) {
      this._values.set(
        name,
        new Map([...(this._values.get(name) ?? []), ...found])
      );
      this._changed();
    }
    void this._next();
  }

  private _read: (name: string, signal: AbortSignal) => Promise<FinalMetrics>;
  private _changed: () => void;
  private _interval: number;
  private _maxJobs: number;
  private _now: () => number;
  private _disposed = false;
  private _values = new Map<string, FinalMetrics>();
  /** When each running job was last read (ms). */
  private _last = new Map<string, number>();
  private _queue: string[] = [];
  /** Jobs deleted here (the last maxForgotten): never read. */
  private _gone: CappedSet<string>;
  private _reading: {
    name: string;
    abort: AbortController;
    done: Promise<FinalMetrics>;
  } | null = null;
}

export namespace LiveMetrics {
  export interface IOptions {
    /** Where the logs are read (unless `read` is given). */
    service?: KaleService;
    /** Read a job's latest metrics (default: the end of its logs). */
    read?: (name: string, signal: AbortSignal) => Promise<FinalMetrics>;
    /** Called when a job's metrics changed. */
    changed: () => void;
    /** Least milliseconds between two reads of a job (default 5 s). */
    interval?: number;
    /** Running jobs read at most: the first listed (default 10). */
    maxJobs?: number;
    /** The clock (ms). */
    now?: () => number;
    /**
     * Jobs deleted here remembered at most (default 500): a list asked for
     * before a delete may still hold the job, and it is not read again.
     */
    maxForgotten?: number;
  }
}
