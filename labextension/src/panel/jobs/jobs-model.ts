import type { IDisposable } from '@lumino/disposable';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import type { KaleService } from '../../api';
import { errorMessage } from '../../errors';
import { SavedResults } from '../../results/saved-results';
import { JobTimelines } from '../../timeline';
import type { Kale } from '../../types';
import { FinalMetricsCache } from './job-metrics';
import {
  DEFAULT_VIEW,
  FinalMetrics,
  IJobsView,
  restoredView
} from './jobs-view';
import { LiveMetrics } from './live-metrics';

/**
 * The jobs list: polled while the panel is visible (backing off when the
 * server fails, in standby while the page is hidden). A rerun is the
 * server's (POST jobs/{name}/rerun: the job as recorded).
 */
export class JobsModel implements IDisposable {
  constructor(options: JobsModel.IOptions) {
    this._service = options.service;
    this.timelines = options.timelines ?? new JobTimelines();
    this.timelines.changed.connect(this._onTimelines, this);
    this.metrics = new FinalMetricsCache({
      service: options.service,
      changed: () => this._changed.emit()
    });
    this.live = new LiveMetrics({
      service: options.service,
      changed: () => this._changed.emit()
    });
    this.results = new SavedResults({
      service: options.service,
      changed: () => this._changed.emit()
    });
    this._store = options.store;
    void this._store
      ?.fetch()
      .then(view => {
        if (view) {
          this.view = restoredView(view);
          this._changed.emit();
        }
      })
      .catch(() => undefined);
    this._poll = new Poll({
      factory: () => this._refresh(),
      frequency: {
        interval: options.pollInterval ?? 2000,
        backoff: true,
        max: 30000
      },
      standby: () => (this._visible ? 'when-hidden' : true),
      name: 'kale-ext:jobs'
    });
  }

  /** The jobs, newest first; null until the first answer. */
  jobs: Kale.IJobInfo[] | null = null;
  /** Why the last poll failed, or ''. */
  error = '';
  /** The phases of the jobs, as the polls saw them. */
  readonly timelines: JobTimelines;
  /** Jobs being deleted (their row shows it). */
  readonly deleting = new Set<string>();
  /** Jobs checked for comparing, in the order checked. */
  selected: string[] = [];
  /** How the user arranged the list (kept across reloads). */
  view: IJobsView = DEFAULT_VIEW;
  /** The final metrics of the ended jobs. */
  readonly metrics: FinalMetricsCache;
  /** The latest metrics of the running jobs, read again while they run. */
  readonly live: LiveMetrics;
  /** What the ended jobs saved (their result, their outputs). */
  readonly results: SavedResults;

  /** The job submitted last from here, or null. */
  lastSubmitted: string | null = null;
  /** A job whose row should come into view once it is listed, or null. */
  revealing: string | null = null;

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * A job is about to be deleted here (its name): what shows it elsewhere
   * (its logs tab) closes before the delete goes, so nothing asks for it
   * after (a 404, in the browser's console).
   */
  get jobDeleting(): ISignal<this, string> {
    return this._deleting;
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  /**
   * Poll only while the panel is visible; catch up as it shows.
   */
  setVisible(visible: boolean): void {
    this._visible = visible;
    if (visible) {
      this.refresh();
    }
  }

  refresh(): void {
    void this._poll.refresh();
  }

  /**
   * A job was submitted here.
   */
  remember(name: string): void {
    this.lastSubmitted = name;
  }

  /**
   * A job's metrics: the final ones once it ended, the latest while it runs.
   */
  metricsOf(name: string): FinalMetrics | undefined {
    return this.metrics.get(name) ?? this.live.get(name);
  }

  /**
   * Arrange the list (the choice is kept).
   */
  setView(change: Partial<IJobsView>): void {
    this.view = { ...this.view, ...change };
    void this._store?.save(this.view)?.catch(() => undefined);
    this._changed.emit();
  }

  /**
   * Check or uncheck a job for comparing.
   */
  select(name: string, on: boolean): void {
    const rest = this.selected.filter(n => n !== name);
    this.selected = on ? [...rest, name] : rest;
    this._changed.emit();
  }

  /**
   * Bring a job's row into view once it is listed.
   */
  reveal(name: string): void {
    this.revealing = name;
    this._changed.emit();
  }

  /**
   * The row came into view.
   */
  revealed(): void {
    this.revealing = null;
  }

  /**
   * Delete a job (throws the server's error).
   */
  async delete(name: string): Promise<void> {
    this.deleting.add(name);
    this._changed.emit();
    try {
      // nothing of it is read from now on, and no read is on its way when
      // the delete goes (it would answer 404, in the browser's console)
      await Promise.all([
        this.metrics.forget(name),
        this.live.forget(name),
        this.results.forget(name)
      ]);
      this._deleting.emit(name);
      try {
        await this._service.deleteJob(name);
      } catch (reason) {
        this.metrics.unforget(name);
        this.live.unforget(name);
        this.results.unforget(name);
        throw reason;
      }
      this.jobs = (this.jobs ?? []).filter(j => j.name !== name);
      this.selected = this.selected.filter(n => n !== name);
    } finally {
      this.deleting.delete(name);
      this._changed.emit();
      this.refresh();
    }
  }

  dispose(): void {
    if (!this.isDisposed) {
      this._poll.dispose();
      this.timelines.changed.disconnect(this._onTimelines, this);
      this.metrics.dispose();
      this.live.dispose();
      this.results.dispose();
      Signal.clearData(this);
    }
  }

  /**
   * A job's status came in from elsewhere (its logs view asks for it every
   * second, and learns at once when it ends): its row says the same. The
   * timelines keep the newest answer of all.
   */
  private _onTimelines(_: JobTimelines, names: string[]): void {
    if (!this.jobs) {
      return;
    }
    let changed = false;
    this.jobs = this.jobs.map(job => {
      const latest = names.includes(job.name)
        ? this.timelines.get(job.name)?.job
        : undefined;
      if (latest && latest !== job) {
        changed = true;
        return latest;
      }
      return job;
    });
    if (changed) {
      this._changed.emit();
    }
  }

  private async _refresh(): Promise<void> {
    try {
      const jobs = await this._service.listJobs();
      this.error = '';
      this.timelines.observe(jobs);
      // A job seen to end (by its logs view) does not run again: a list
      // answered before that is not newer.
      this.jobs = jobs.map(job => {
        const timeline = this.timelines.get(job.name);
        return timeline?.final && timeline.job ? timeline.job : job;
      });
      this.metrics.want(this.jobs);
      this.live.want(this.jobs);
      this.results.want(this.jobs);
    } catch (reason) {
      this.error = errorMessage(reason);
      throw reason; // the poll backs off
    } finally {
      this._changed.emit();
    }
  }

  private _service: KaleService;
  private _store?: JobsModel.IViewStore;
  private _poll: Poll;
  private _visible = false;
  private _changed = new Signal<this, void>(this);
  private _deleting = new Signal<this, string>(this);
}

export namespace JobsModel {
  export interface IOptions {
    service: KaleService;
    /** Milliseconds between polls (default 2 s). */
    pollInterval?: number;
    /** Where the polled statuses go (a new store by default). */
    timelines?: JobTimelines;
    /** Where the arrangement of the list is kept (across reloads). */
    store?: IViewStore;
  }

  /**
   * Keeps the list's arrangement (JupyterLab's state database).
   */
  export interface IViewStore {
    fetch(): Promise<IJobsView | undefined>;
    save(view: IJobsView): Promise<void> | void;
  }
}
