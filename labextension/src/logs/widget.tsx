import { ReactWidget } from '@jupyterlab/ui-components';
import type { Message } from '@lumino/messaging';
import { Debouncer } from '@lumino/polling';
import { Signal } from '@lumino/signaling';
import * as React from 'react';

import type { KaleService } from '../api';
import { useSignal } from '../hooks';
import { LogBuffer } from './buffer';
import { LogList } from './list';

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
    this.addClass('kale-ext-Logs');
    this.id = `kale-ext-logs-view-${options.name}`;
    this.title.label = `Logs: ${options.name}`;
    this.title.caption = `kale_ext job ${options.name}: logs`;
    this.title.closable = true;
  }

  readonly service: KaleService;
  readonly jobName: string;
  readonly buffer: LogBuffer;
  readonly changed = new Signal<this, void>(this);

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
    this._setStream({ phase: 'connecting' });
    this.service
      .streamLogs(this.jobName, {
        signal: abort.signal,
        onLines: lines => this.buffer.push(lines),
        onState: phase => this._setStream({ phase })
      })
      .then(end => {
        if (end !== null) {
          this.buffer.flush();
          const detail = [end.status, end.reason].filter(Boolean).join(': ');
          this._setStream({ phase: 'ended', detail });
        }
      })
      .catch(reason => {
        if (!abort.signal.aborted) {
          this._setStream({
            phase: 'failed',
            detail: reason instanceof Error ? reason.message : String(reason)
          });
        }
      });
  }

  dispose(): void {
    this._abort?.abort();
    this._search.dispose();
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (!this._started) {
      this._started = true;
      this.start();
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
  }
}

function LogsRoot(props: { view: LogsView }): JSX.Element {
  const { view } = props;
  useSignal(view.changed);
  useSignal(view.buffer.changed);
  return (
    <div className="kale-ext-LogsView">
      <LogsToolbar view={view} />
      <LogList
        buffer={view.buffer}
        follow={view.follow}
        onFollowChange={follow => (view.follow = follow)}
        label={`Log lines of ${view.jobName}`}
      />
    </div>
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
  const count =
    buffer.size === buffer.total
      ? `${buffer.total.toLocaleString('en-US')} lines`
      : `${buffer.size.toLocaleString('en-US')} of ${buffer.total.toLocaleString('en-US')} lines`;
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
