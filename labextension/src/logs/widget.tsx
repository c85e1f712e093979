import { ReactWidget } from '@jupyterlab/ui-components';
import type { Message } from '@lumino/messaging';
import { Debouncer, Poll } from '@lumino/polling';
import { Signal } from '@lumino/signaling';
import * as React from 'react';

import { KaleAPIError, type KaleService } from '../api';
import { errorMessage } from '../errors';
import { useSignal } from '../hooks';
import { MetricsStore } from '../metrics/store';
import { JobTimelines } from '../timeline';
import { LogBuffer } from './buffer';
import { LogList } from './list';
import { MetricsPane } from './metrics';
import { TimelinePane } from './timeline';

/**
 * Milliseconds between two polls of the job's status (for its timeline).
 */
const STATUS_INTERVAL = 1000;

/**
 * The stream's state, as the status line shows it.
 */
export interface IStreamState {
  phase: 'connecting' | 'open' | 'reconnecting' | 'ended' | 'failed';
  /** The job's final status (`end` event), or the error. */
  detail?: string;
}

/**
 * The logs of one job, streamed from the server (SSE), in a main-area tab.
 */
export class LogsView extends ReactWidget {
  constructor(options: LogsView.IOptions) {
    super();
    this.service = options.service;
    this.jobName = options.name;
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
    return this._statusNote;
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

  toggleSection(section: keyof LogsView['sections'], open: boolean): void {
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
          void this._status?.refresh(); // the final state, for the timeline
          const detail = [end.status, end.reason].filter(Boolean).join(': ');
          this._setStream({ phase: 'ended', detail });
        }
      })
      .catch(reason => {
        if (!abort.signal.aborted) {
          this._setStream({
            phase: 'failed',
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
      this._pollStatus();
    }
  }

  /**
   * Poll the job's status (`GET jobs/{name}`) for its timeline while the
   * view is visible, until the job ends (or is gone).
   */
  private _pollStatus(): void {
    this._status = new Poll({
      factory: async () => {
        try {
          this.timelines.observe(await this.service.getJob(this.jobName));
        } catch (reason) {
          if (
            reason instanceof KaleAPIError &&
            reason.response.status === 404
          ) {
            this._statusNote = 'the job is gone';
            this.changed.emit();
            return;
          }
          throw reason; // backs off
        }
      },
      frequency: {
        interval: this._statusInterval,
        backoff: true,
        max: 30000
      },
      standby: () =>
        this._statusNote !== '' ||
        this.timelines.get(this.jobName)?.final === true ||
        'when-hidden',
      name: `kale-ext:status:${this.jobName}`
    });
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
  private _status: Poll | null = null;
  private _statusNote = '';
  private _statusInterval: number;
  private _started = false;
  private _follow = true;
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
  }
}

function LogsRoot(props: { view: LogsView }): JSX.Element {
  const { view } = props;
  useSignal(view.changed);
  useSignal(view.buffer.changed);
  return (
    <div className="kale-ext-LogsView">
      <LogsToolbar view={view} />
      <div className="kale-ext-Insights">
        <InsightSection
          view={view}
          section="metrics"
          title="Metrics"
          badge={
            view.metrics.metrics.length > 0
              ? String(view.metrics.metrics.length)
              : ''
          }
        >
          <MetricsPane store={view.metrics} version={view.metrics.version} />
        </InsightSection>
        <InsightSection view={view} section="timeline" title="Timeline">
          <TimelinePane
            timeline={view.timelines.get(view.jobName)}
            note={view.statusNote}
          />
        </InsightSection>
      </div>
      <LogList
        buffer={view.buffer}
        follow={view.follow}
        onFollowChange={follow => (view.follow = follow)}
        label={`Log lines of ${view.jobName}`}
      />
    </div>
  );
}

/**
 * A collapsible part of the view (a native `<details>`).
 */
function InsightSection(props: {
  view: LogsView;
  section: keyof LogsView['sections'];
  title: string;
  badge?: string;
  children: React.ReactNode;
}): JSX.Element {
  const { view, section } = props;
  return (
    <details
      className="kale-ext-Insight"
      data-section={section}
      open={view.sections[section]}
      onToggle={e =>
        view.toggleSection(section, (e.target as HTMLDetailsElement).open)
      }
    >
      <summary className="kale-ext-Insight-title">
        {props.title}
        {props.badge && (
          <span className="kale-ext-Count" aria-hidden="true">
            {props.badge}
          </span>
        )}
      </summary>
      {view.sections[section] && (
        <div className="kale-ext-Insight-body">{props.children}</div>
      )}
    </details>
  );
}

function LogsToolbar(props: { view: LogsView }): JSX.Element {
  const { view } = props;
  const { buffer, stream } = view;
  const filter = buffer.filter;
  const nodes = buffer.nodes;
  const ranks = buffer.ranks;
  const searchId = React.useId();
  const rankId = React.useId();
  const status = {
    connecting: 'Connecting…',
    open: 'Streaming',
    reconnecting: 'Reconnecting…',
    ended: `Ended${stream.detail ? `: ${stream.detail}` : ''}`,
    failed: `Failed: ${stream.detail ?? ''}`
  }[stream.phase];
  // Hidden metrics lines are not counted (the toggle tells how many).
  const total = view.showMetricLines
    ? buffer.total
    : buffer.total - buffer.metricLines;
  const count =
    buffer.size === total
      ? `${total.toLocaleString('en-US')} lines`
      : `${buffer.size.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} lines`;
  return (
    <div className="kale-ext-LogsToolbar">
      <div role="tablist" aria-label="Nodes" className="kale-ext-NodeTabs">
        {[null, ...nodes].map(node => (
          <button
            key={node ?? 'all'}
            type="button"
            role="tab"
            aria-selected={filter.node === node}
            className={`kale-ext-NodeTab${filter.node === node ? ' kale-ext-mod-on' : ''}`}
            onClick={() => buffer.setFilter({ node })}
          >
            {node === null ? 'All nodes' : `Node ${node}`}
          </button>
        ))}
      </div>
      {ranks.length > 1 && (
        <>
          <label htmlFor={rankId} className="kale-ext-VisuallyHidden">
            Rank
          </label>
          <select
            id={rankId}
            className="kale-ext-Select kale-ext-Select-small"
            value={filter.rank ?? ''}
            onChange={e =>
              buffer.setFilter({
                rank: e.target.value === '' ? null : Number(e.target.value)
              })
            }
          >
            <option value="">All ranks</option>
            {ranks.map(r => (
              <option key={r} value={r}>{`Rank ${r}`}</option>
            ))}
          </select>
        </>
      )}
      <label htmlFor={searchId} className="kale-ext-VisuallyHidden">
        Search the logs
      </label>
      <input
        id={searchId}
        type="search"
        className="kale-ext-Input kale-ext-LogsSearch"
        placeholder="Search"
        value={view.query}
        onChange={e => view.search(e.target.value)}
      />
      <button
        type="button"
        className={`kale-ext-Button kale-ext-Button-plain${view.follow ? ' kale-ext-mod-on' : ''}`}
        aria-pressed={view.follow}
        title={
          view.follow
            ? 'Pause: stop at the current line'
            : 'Follow the newest line'
        }
        onClick={() => (view.follow = !view.follow)}
      >
        Auto-scroll
      </button>
      {buffer.metricLines > 0 && (
        <button
          type="button"
          className={`kale-ext-Button kale-ext-Button-plain${view.showMetricLines ? ' kale-ext-mod-on' : ''}`}
          aria-pressed={view.showMetricLines}
          title={
            view.showMetricLines
              ? 'Hide the KALE_METRIC lines (the Metrics section plots them)'
              : `Show the ${buffer.metricLines.toLocaleString('en-US')} KALE_METRIC lines in the log`
          }
          onClick={() => (view.showMetricLines = !view.showMetricLines)}
        >
          Metric lines ({buffer.metricLines.toLocaleString('en-US')})
        </button>
      )}
      <button
        type="button"
        className="kale-ext-Button kale-ext-Button-plain"
        onClick={() => view.download()}
      >
        Download
      </button>
      {(stream.phase === 'failed' || stream.phase === 'ended') && (
        <button
          type="button"
          className="kale-ext-Button kale-ext-Button-plain"
          onClick={() => view.start()}
        >
          Reload
        </button>
      )}
      <span className={`kale-ext-LogsStatus kale-ext-mod-${stream.phase}`}>
        <span role="status">{status}</span> · <span>{count}</span>
      </span>
    </div>
  );
}
