import { ReactWidget } from '@jupyterlab/ui-components';
import type { Message } from '@lumino/messaging';
import { Debouncer } from '@lumino/polling';
import { Signal } from '@lumino/signaling';
import * as React from 'react';

import { KaleAPIError, type KaleService } from '../api';
import { errorMessage } from '../errors';
import { MetricsStore } from '../metrics/store';
import { JobTimelines } from '../timeline';
import { LogBuffer } from './buffer';
import { JobStatusPoll } from './status-poll';
import { ILogsModel, IStreamState, LogsRoot, LogsSection } from './view';

/**
 * Milliseconds between two polls of the job's status (for its timeline).
 */
const STATUS_INTERVAL = 1000;

/**
 * The logs of one job, streamed from the server (SSE), in a main-area tab.
 */
export class LogsView extends ReactWidget implements ILogsModel {
  constructor(options: LogsView.IOptions) {
    super();
    this.service = options.service;
    this.jobName = options.name;
    this.notebook = options.notebook ?? null;
    this._pinned = options.pinned ?? false;
    this.buffer = options.buffer ?? new LogBuffer();
    this.timelines = options.timelines ?? new JobTimelines();
    this.timelines.changed.connect(this._onTimelines, this);
    this._statusInterval = options.statusInterval ?? STATUS_INTERVAL;
    this.addClass('kale-ext-Logs');
    this.id = `kale-ext-logs-view-${options.name}`;
    this.title.label = `Logs: ${options.name}`;
    this.title.caption = `kale_ext job ${options.name}: logs`;
    this.title.closable = true;
  }

  readonly service: KaleService;
  readonly jobName: string;
  /** The notebook whose submit opened this tab (null: opened another way). */
  readonly notebook: string | null;
  readonly buffer: LogBuffer;
  /** The metrics the job reported (`KALE_METRIC` lines). */
  readonly metrics = new MetricsStore();
  /** The observed phases of the jobs (shared with the jobs list). */
  readonly timelines: JobTimelines;
  readonly changed = new Signal<this, void>(this);

  /** Which parts of the view are open. */
  readonly sections = { metrics: true, timeline: true };

  /** Why the job's status is not polled any more ('' while it is). */
  get statusNote(): string {
    return this._status?.note ?? '';
  }

  /**
   * Whether the job's status is polled (for the timeline): from when the
   * view is shown until the job ends or is gone.
   */
  get pollingStatus(): boolean {
    return this._status?.active ?? false;
  }

  /**
   * Whether the tab stays when the notebook submits again (else the next
   * submit's logs take its place).
   */
  get pinned(): boolean {
    return this._pinned;
  }

  set pinned(pinned: boolean) {
    if (pinned !== this._pinned) {
      this._pinned = pinned;
      this.title.className = pinned ? 'kale-ext-mod-pinned' : '';
      this.changed.emit();
    }
  }

  /** Whether the log shows the metrics lines (hidden by default). */
  get showMetricLines(): boolean {
    return this.buffer.filter.metrics;
  }

  set showMetricLines(show: boolean) {
    if (show !== this.buffer.filter.metrics) {
      this.buffer.setFilter({ metrics: show });
      this.changed.emit();
    }
  }

  toggleSection(section: LogsSection, open: boolean): void {
    if (this.sections[section] !== open) {
      this.sections[section] = open;
      this.changed.emit();
    }
  }

  get stream(): IStreamState {
    return this._stream;
  }

  /** Whether the view sticks to the newest line. */
  get follow(): boolean {
    return this._follow;
  }

  set follow(follow: boolean) {
    if (follow !== this._follow) {
      this._follow = follow;
      this.changed.emit();
    }
  }

  /**
   * Search the lines (debounced, so typing stays fluid on huge logs).
   */
  search(query: string): void {
    this._query = query;
    this.changed.emit();
    void this._search.invoke();
  }

  get query(): string {
    return this._query;
  }

  /**
   * Save the lines shown (the filter applies) as a text file.
   */
  download(): void {
    const blob = new Blob([this.buffer.text()], { type: 'text/plain' });
    const url = URL.createObjectURL(blob);
    const { node, rank } = this.buffer.filter;
    const part =
      node !== null ? `-node${node}` : rank !== null ? `-rank${rank}` : '';
    const a = document.createElement('a');
    a.href = url;
    a.download = `${this.jobName}${part}.log`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  /**
   * Connect (again, after the stream failed).
   */
  start(): void {
    this._abort?.abort();
    const abort = (this._abort = new AbortController());
    this.buffer.clear();
    this.metrics.clear();
    this._setStream({ phase: 'connecting' });
    this.service
      .streamLogs(this.jobName, {
        signal: abort.signal,
        onLines: lines => {
          this.buffer.push(lines);
          this.metrics.push(lines);
        },
        onState: phase => this._setStream({ phase })
      })
      .then(end => {
        if (end !== null) {
          this.buffer.flush();
          this._status?.refresh(); // the final state, for the timeline
          const shown = end.status_text ?? end.status; // `Stopped`, not Failed
          const detail = [shown, end.reason].filter(Boolean).join(': ');
          this._setStream({ phase: 'ended', detail });
        }
      })
      .catch(reason => {
        if (!abort.signal.aborted) {
          // a job deleted elsewhere is not a failed job
          const gone =
            reason instanceof KaleAPIError && reason.response.status === 404;
          this._setStream({
            phase: gone ? 'gone' : 'failed',
            detail: errorMessage(reason)
          });
        }
      });
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._abort?.abort();
    this._search.dispose();
    this._status?.dispose();
    this.timelines.changed.disconnect(this._onTimelines, this);
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (!this._started) {
      this._started = true;
      this.start();
      this._status = new JobStatusPoll({
        service: this.service,
        name: this.jobName,
        timelines: this.timelines,
        interval: this._statusInterval,
        changed: () => this.changed.emit()
      });
    }
  }

  private _onTimelines(_: JobTimelines, names: string[]): void {
    if (names.includes(this.jobName)) {
      this.changed.emit();
    }
  }

  protected render(): JSX.Element {
    return <LogsRoot view={this} />;
  }

  private _setStream(stream: IStreamState): void {
    this._stream = stream;
    this.changed.emit();
  }

  private _abort: AbortController | null = null;
  private _status: JobStatusPoll | null = null;
  private _statusInterval: number;
  private _started = false;
  private _follow = true;
  private _pinned: boolean;
  private _query = '';
  private _stream: IStreamState = { phase: 'connecting' };
  private _search = new Debouncer(
    () => this.buffer.setFilter({ query: this._query }),
    150
  );
}

export namespace LogsView {
  export interface IOptions {
    service: KaleService;
    name: string;
    buffer?: LogBuffer;
    /** The timelines to add the job's polled status to (shared). */
    timelines?: JobTimelines;
    /** Milliseconds between polls of the job's status (default 1 s). */
    statusInterval?: number;
    /** The notebook whose submit opens it (its path). */
    notebook?: string | null;
    /** Kept when that notebook submits again. */
    pinned?: boolean;
  }
}
