import type { IDisposable } from '@lumino/disposable';

import { CappedMap, CappedSet } from '../../capped';
import type { Kale } from '../../types';

/**
 * Something read once for each ended job (its final metrics, what it
 * saved), one job at a time: a job that ended does not change, so nothing is
 * read twice, and a list stays cheap however many jobs it shows. What could
 * not be read is kept as `read` gave it, and not asked again.
 */
export class EndedJobs<T> implements IDisposable {
  constructor(options: EndedJobs.IOptions<T>) {
    this._read = options.read;
    this._ended = options.ended;
    this._changed = options.changed;
    const maxJobs = options.maxJobs ?? 500;
    this._cache = new CappedMap(maxJobs);
    this._gone = new CappedSet(maxJobs);
  }

  get isDisposed(): boolean {
    return this._abort.signal.aborted;
  }

  /** What was read of a job: undefined until read (or while it runs). */
  get(name: string): T | undefined {
    return this._cache.get(name);
  }

  /** Read those of `jobs` that ended, unless read (or queued) already. */
  want(jobs: Kale.IJobInfo[]): void {
    for (const job of jobs) {
      const known =
        this._gone.has(job.name) ||
        this._cache.has(job.name) ||
        this._queue.some(j => j.name === job.name) ||
        this._reading?.name === job.name;
      if (this._ended(job) && !known) {
        this._queue.push(job);
      }
    }
    void this._next();
  }

  /**
   * A job about to be deleted here: not read from now on (a list asked for
   * before the delete may still hold it), and its read stopped if it runs.
   * Resolves once no request about it is on its way: a read that met the
   * delete would answer 404, an error in the browser's console.
   */
  async forget(name: string): Promise<void> {
    this._gone.add(name);
    this._queue = this._queue.filter(j => j.name !== name);
    this._cache.delete(name);
    if (this._reading?.name === name) {
      this._reading.abort.abort();
      await this._reading.done;
    }
  }

  /**
   * The delete failed: the job is still there, and read again when listed.
   */
  unforget(name: string): void {
    this._gone.delete(name);
  }

  dispose(): void {
    this._abort.abort();
    this._reading?.abort.abort();
    this._queue = [];
  }

  private async _next(): Promise<void> {
    if (this._reading !== null || this.isDisposed) {
      return;
    }
    const job = this._queue.shift();
    if (job === undefined) {
      return;
    }
    const abort = new AbortController();
    const done = this._read(job, abort.signal);
    this._reading = { name: job.name, abort, done };
    const value = await done;
    this._reading = null;
    if (this.isDisposed) {
      return;
    }
    if (!this._gone.has(job.name)) {
      this._cache.set(job.name, value);
    }
    this._changed();
    void this._next();
  }

  private _read: EndedJobs.IOptions<T>['read'];
  private _ended: (job: Kale.IJobInfo) => boolean;
  private _changed: () => void;
  /** What was read of the last maxJobs jobs. */
  private _cache: CappedMap<string, T>;
  private _queue: Kale.IJobInfo[] = [];
  /**
   * The read running (one at a time), or null: its job, what stops it (its
   * job forgotten, or on dispose) and its end (never rejects).
   */
  private _reading: {
    name: string;
    abort: AbortController;
    done: Promise<T>;
  } | null = null;
  private _abort = new AbortController();
  /** Jobs deleted here (at most maxJobs): never read. */
  private _gone: CappedSet<string>;
}

export namespace EndedJobs {
  export interface IOptions<T> {
    /** Read a job (never throws: what cannot be read is a value too). */
    read: (job: Kale.IJobInfo, signal: AbortSignal) => Promise<T>;
    /** Whether a job has ended (and so is read). */
    ended: (job: Kale.IJobInfo) => boolean;
    /** Called when a job was read. */
    changed: () => void;
    /** Jobs remembered at most (default 500). */
    maxJobs?: number;
  }
}
