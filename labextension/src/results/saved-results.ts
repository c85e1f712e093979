import type { IDisposable } from '@lumino/disposable';

import type { KaleService } from '../api';
import type { Kale } from '../types';
import { hasEnded, ISaved } from './load-result';

/**
 * What ended jobs saved (their result, and their outputs when there is no
 * result), read once each, one job at a time: an ended job does not change,
 * so nothing is read twice, and the list stays cheap however many jobs it
 * shows. A list entry that carries `result` spares the `GET jobs/{name}`.
 */
export class SavedResults implements IDisposable {
  constructor(options: SavedResults.IOptions) {
    this._service = options.service;
    this._changed = options.changed;
    this._maxJobs = options.maxJobs ?? 500;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /**
   * What a job saved: undefined until read (or while it runs).
   */
  get(name: string): ISaved | undefined {
    return this._cache.get(name);
  }

  /**
   * Read what those of `jobs` that ended saved, unless read already.
   */
  want(jobs: Kale.IJobInfo[]): void {
    for (const job of jobs) {
      const known =
        this._cache.has(job.name) ||
        this._queue.some(j => j.name === job.name) ||
        this._reading === job.name;
      if (hasEnded(job) && !known) {
        this._queue.push(job);
      }
    }
    void this._next();
  }

  dispose(): void {
    this._disposed = true;
    this._queue = [];
  }

  private async _next(): Promise<void> {
    if (this._reading !== null || this._disposed) {
      return;
    }
    const job = this._queue.shift();
    if (job === undefined) {
      return;
    }
    this._reading = job.name;
    const saved = await this._read(job);
    this._reading = null;
    if (this._disposed) {
      return;
    }
    this._cache.set(job.name, saved);
    if (this._cache.size > this._maxJobs) {
      this._cache.delete(this._cache.keys().next().value!);
    }
    this._changed();
    void this._next();
  }

  private async _read(job: Kale.IJobInfo): Promise<ISaved> {
    let result: Kale.IJobResult | null = null;
    try {
      result =
        job.result !== undefined
          ? job.result
          : ((await this._service.getJob(job.name)).result ?? null);
    } catch {
      // unreadable (deleted meanwhile): nothing to load, not asked again
      return { result: null, files: 0 };
    }
    if (result?.saved) {
      return { result, files: null };
    }
    try {
      const outputs = await this._service.jobOutputs(job.name);
      return { result, files: outputs.listed ? outputs.files.length : null };
    } catch {
      return { result, files: 0 };
    }
  }

  private _service: Pick<KaleService, 'getJob' | 'jobOutputs'>;
  private _changed: () => void;
  private _maxJobs: number;
  private _cache = new Map<string, ISaved>();
  private _queue: Kale.IJobInfo[] = [];
  /** The job being read, or null. */
  private _reading: string | null = null;
  private _disposed = false;
}

export namespace SavedResults {
  export interface IOptions {
    service: Pick<KaleService, 'getJob' | 'jobOutputs'>;
    /** Called when what a job saved was read. */
    changed: () => void;
    /** Jobs remembered at most (default 500). */
    maxJobs?: number;
  }
}
