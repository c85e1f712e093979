import * as React from 'react';

import {
  describeNode,
  formatDuration,
  JobTimeline,
  Phase,
  PHASE_LABELS,
  PHASES
} from '../timeline';

/**
 * A compact bar per node: the phases the polls saw, each as wide as the time
 * between the poll that first saw it and the one that saw the next.
 */
export function TimelinePane(props: {
  timeline: JobTimeline | undefined;
  /** Why the status cannot be polled any more ('' when it can). */
  note: string;
}): JSX.Element {
  const { timeline, note } = props;
  if (!timeline || timeline.start === null || timeline.lastSeen === null) {
    return (
      <p className="kale-ext-Muted kale-ext-Timeline-empty">
        {note || 'Waiting for the job’s status…'}
      </p>
    );
  }
  const start = timeline.start;
  const span = timeline.lastSeen - start;
  const used = new Set<Phase>();
  const rows = timeline.nodes.map(index => {
    const segments = timeline.segments(index);
    segments.forEach(s => used.add(s.phase));
    const text = describeNode(timeline, index);
    return (
      <div className="kale-ext-Timeline-row" key={index} data-node={index}>
        <span className="kale-ext-Timeline-node">node {index}</span>
        <div className="kale-ext-Timeline-bar" role="img" aria-label={text}>
          {segments.map((s, i) => (
            <span
              key={i}
              className={`kale-ext-Phase kale-ext-Phase-${s.phase}`}
              data-phase={s.phase}
              style={{ flexGrow: span > 0 ? s.end - s.start : 1 }}
              title={`${PHASE_LABELS[s.phase]}: ${formatDuration(s.end - s.start)} (from ${clock(s.start)})`}
            />
          ))}
        </div>
        <span className="kale-ext-Timeline-text" aria-hidden="true">
          {text.slice(text.indexOf(':') + 2)}
        </span>
      </div>
    );
  });
  return (
    <div className="kale-ext-Timeline">
      {rows}
      <div className="kale-ext-Timeline-foot">
        <ul className="kale-ext-Timeline-legend" aria-label="Phases">
          {PHASES.filter(p => used.has(p)).map(p => (
            <li key={p}>
              <span
                className={`kale-ext-Phase kale-ext-Phase-${p}`}
                aria-hidden="true"
              />
              {PHASE_LABELS[p]}
            </li>
          ))}
        </ul>
        <span className="kale-ext-Muted">
          As polled from {clock(start)} to {clock(timeline.lastSeen)} (
          {formatDuration(span)}){note ? ` · ${note}` : ''}
        </span>
      </div>
    </div>
  );
}

function clock(ms: number): string {
  return new Date(ms).toLocaleTimeString('en-GB', { hour12: false });
}
