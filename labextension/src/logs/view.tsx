import type { ISignal } from '@lumino/signaling';
import * as React from 'react';

import { useSignal } from '../hooks';
import { ProgressBar } from '../progress/bar';
import type { MetricsStore } from '../metrics/store';
import type { JobTimelines } from '../timeline';
import type { LogBuffer } from './buffer';
import { LogList } from './list';
import { MetricsPane } from './metrics';
import { TimelinePane } from './timeline';

/**
 * The stream's state, as the status line shows it.
 */
export interface IStreamState {
  /** `gone`: the server has no such job (deleted meanwhile). */
  phase: 'connecting' | 'open' | 'reconnecting' | 'ended' | 'failed' | 'gone';
  /** The job's final status (`end` event), or the error. */
  detail?: string;
}

/**
 * The parts of the view the user opens and closes.
 */
export type LogsSection = 'metrics' | 'timeline';

/**
 * What the view draws and what its controls change (the logs widget).
 */
export interface ILogsModel {
  readonly jobName: string;
  readonly buffer: LogBuffer;
  readonly metrics: MetricsStore;
  readonly timelines: JobTimelines;
  readonly changed: ISignal<unknown, void>;
  readonly sections: Record<LogsSection, boolean>;
  readonly stream: IStreamState;
  readonly statusNote: string;
  readonly query: string;
  follow: boolean;
  /** Kept when its notebook submits again (see logs/tabs.ts). */
  pinned: boolean;
  showMetricLines: boolean;
  toggleSection(section: LogsSection, open: boolean): void;
  search(query: string): void;
  download(): void;
  start(): void;
}

/**
 * The logs view as the user sees it: a toolbar (nodes, ranks, search,
 * follow, download), the metrics and timeline sections, the lines.
 */
export function LogsRoot(props: { view: ILogsModel }): JSX.Element {
  const { view } = props;
  useSignal(view.changed);
  useSignal(view.buffer.changed);
  return (
    <div className="kale-ext-LogsView">
      <LogsToolbar view={view} />
      <ProgressBar
        job={view.timelines.get(view.jobName)?.job}
        className="kale-ext-LogsProgress"
      />
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
  view: ILogsModel;
  section: LogsSection;
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
      onToggle={e => {
        if (e.target === e.currentTarget) {
          view.toggleSection(section, e.currentTarget.open);
        }
      }}
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

/** A toolbar button that is on or off (aria-pressed, drawn pressed when on). */
function Toggle(props: {
  on: boolean;
  title: string;
  onClick: () => void;
  children: React.ReactNode;
}): JSX.Element {
  return (
    <button
      type="button"
      className={`kale-ext-Button kale-ext-Button-plain${props.on ? ' kale-ext-mod-on' : ''}`}
      aria-pressed={props.on}
      title={props.title}
      onClick={props.onClick}
    >
      {props.children}
    </button>
  );
}

function LogsToolbar(props: { view: ILogsModel }): JSX.Element {
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
    failed: `Failed: ${stream.detail ?? ''}`,
    gone: `Gone: ${stream.detail ?? ''}`
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
      <Toggle
        on={view.follow}
        title={
          view.follow
            ? 'Pause: stop at the current line'
            : 'Follow the newest line'
        }
        onClick={() => (view.follow = !view.follow)}
      >
        Auto-scroll
      </Toggle>
      {buffer.metricLines > 0 && (
        <Toggle
          on={view.showMetricLines}
          title={
            view.showMetricLines
              ? 'Hide the KALE_METRIC lines (the Metrics section plots them)'
              : `Show the ${buffer.metricLines.toLocaleString('en-US')} KALE_METRIC lines in the log`
          }
          onClick={() => (view.showMetricLines = !view.showMetricLines)}
        >
          Metric lines ({buffer.metricLines.toLocaleString('en-US')})
        </Toggle>
      )}
      <button
        type="button"
        className="kale-ext-Button kale-ext-Button-plain"
        onClick={() => view.download()}
      >
        Download
      </button>
      <Toggle
        on={view.pinned}
        title={
          view.pinned
            ? 'Pinned: the next submit opens its logs in another tab'
            : 'Pin this tab: the next submit from its notebook replaces it unless pinned'
        }
        onClick={() => (view.pinned = !view.pinned)}
      >
        Pin
      </Toggle>
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
