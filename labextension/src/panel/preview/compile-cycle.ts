import type { IDisposable } from '@lumino/disposable';
import { Debouncer } from '@lumino/polling';

import type { KaleService } from '../../api';
import { errorMessage } from '../../errors';
import type { Kale } from '../../types';

/**
 * The notebook checked as it changes: a compile a short while after the
 * last change (the preview, diagnostics and parameters come back), each
 * new one cancelling the one still on its way.
 */
export class CompileCycle implements IDisposable {
  constructor(options: CompileCycle.IOptions) {
    this._service = options.service;
    this._request = options.request;
    this._changed = options.changed;
    this._debouncer = new Debouncer(() => this._run(), options.delay ?? 400);
  }

  /** The last answer, or null before the first (or after a failure). */
  result: Kale.ICompileResult | null = null;
  /**
   * The last answer for which the notebook compiled (its function, its
   * parameters and packages are known), even if its options did not check.
   */
  lastCompiled: Kale.ICompileResult | null = null;
  /** Whether a compile is on its way. */
  running = false;
  /**
   * What is known of the notebook's parameters and packages: from the last
   * compile, or, while the notebook does not compile, from the last one that
   * did (`stale`); null when never known.
   */
  get known(): CompileCycle.IKnown | null {
    const last = this.lastCompiled;
    return last ? { result: last, stale: last !== this.result } : null;
  }

  /** Whether a compile is due (scheduled, or on its way). */
  get pending(): boolean {
    return this.running || this._scheduled;
  }
  /** Why the last compile failed (the server's message), or ''. */
  error = '';

  get isDisposed(): boolean {
    return this._disposed;
  }

  /**
   * Resolves once no compile is due or on its way (at once if none is).
   */
  settled(): Promise<void> {
    if (!this.pending) {
      return Promise.resolve();
    }
    return new Promise(resolve => this._waiting.push(resolve));
  }

  /**
   * Compile a short while after the last call.
   */
  schedule(): void {
    this._scheduled = true;
    void this._debouncer.invoke();
  }

  /**
   * Compile at once.
   */
  now(): void {
    this._debouncer.stop();
    void this._run();
  }

  /**
   * Forget the answer and cancel the compile on its way (another notebook).
   */
  reset(): void {
    this.cancel();
    this.result = null;
    this.lastCompiled = null;
    this.running = false;
    this.error = '';
  }

  /**
   * Cancel the compile on its way: its answer is not wanted.
   */
  cancel(): void {
    this._abort?.abort();
    this.running = false;
    if (!this._debouncer.isDisposed) {
      this._debouncer.stop();
    }
    this._scheduled = false;
    this._settle();
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._debouncer.dispose();
    this.cancel();
  }

  private async _run(): Promise<void> {
    this._scheduled = false;
    const body = this._request();
    if (!body) {
      this._settle();
      return;
    }
    this._abort?.abort();
    const abort = (this._abort = new AbortController());
    this.running = true;
    this._changed();
    try {
      const result = await this._service.compile(body, abort.signal);
      if (abort.signal.aborted) {
        return;
      }
      this.result = result;
      if (result.function_name) {
        this.lastCompiled = result;
      }
      this.error = '';
    } catch (reason) {
      if (abort.signal.aborted) {
        return;
      }
      this.result = null;
      this.error = errorMessage(reason);
    }
    this.running = false;
    this._changed();
    this._settle();
  }

  /**
   * Tell those waiting that no compile is due any more.
   */
  private _settle(): void {
    if (!this.pending) {
      const waiting = this._waiting;
      this._waiting = [];
      waiting.forEach(resolve => resolve());
    }
  }

  private _service: KaleService;
  private _request: () => Kale.JobRequest | null;
  private _changed: () => void;
  private _debouncer: Debouncer;
  private _abort: AbortController | null = null;
  private _scheduled = false;
  private _waiting: (() => void)[] = [];
  private _disposed = false;
}

export namespace CompileCycle {
  /**
   * The last compile that compiled, and whether a later one did not.
   */
  export interface IKnown {
    result: Kale.ICompileResult;
    stale: boolean;
  }

  export interface IOptions {
    service: KaleService;
    /** What to compile now, or null when there is nothing to. */
    request: () => Kale.JobRequest | null;
    /** Called when a compile starts and when its answer is in. */
    changed: () => void;
    /** How long after the last change to compile, in ms. */
    delay?: number;
  }
}
