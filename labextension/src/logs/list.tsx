import * as React from 'react';

import { useSignal } from '../hooks';
import { seriesClass } from '../metrics/format';
import type { LogBuffer } from './buffer';

/**
 * The height of one log line in pixels (the stylesheet uses the same).
 */
export const ROW_HEIGHT = 18;
const OVERSCAN = 30;

/**
 * A virtual list of log lines: only the lines in view (and a few around)
 * are in the DOM, however many the buffer holds. With `follow` it sticks to
 * the bottom; scrolling up pauses following, scrolling to the end resumes.
 */
export function LogList(props: {
  buffer: LogBuffer;
  follow: boolean;
  onFollowChange: (follow: boolean) => void;
  label: string;
}): JSX.Element {
  const { buffer, follow, onFollowChange } = props;
  useSignal(buffer.changed);
  const ref = React.useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = React.useState(0);
  const [height, setHeight] = React.useState(600);
  const frame = React.useRef(0);

  React.useLayoutEffect(() => {
    const node = ref.current;
    if (node && follow) {
      node.scrollTop = node.scrollHeight;
      setScrollTop(node.scrollTop);
    }
  });

  React.useEffect(() => {
    const node = ref.current;
    if (!node) {
      return;
    }
    const observer = new ResizeObserver(() => setHeight(node.clientHeight));
    observer.observe(node);
    setHeight(node.clientHeight);
    return () => {
      observer.disconnect();
      cancelAnimationFrame(frame.current);
    };
  }, []);

  const onScroll = () => {
    cancelAnimationFrame(frame.current);
    frame.current = requestAnimationFrame(() => {
      const node = ref.current;
      if (!node) {
        return;
      }
      setScrollTop(node.scrollTop);
      const atEnd =
        node.scrollTop + node.clientHeight >= node.scrollHeight - ROW_HEIGHT;
      if (atEnd !== follow) {
        onFollowChange(atEnd);
      }
    });
  };

  const size = buffer.size;
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(
    size,
    Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN
  );
  const query = buffer.filter.query;
  const rows: JSX.Element[] = [];
  for (let i = first; i < last; i++) {
    const line = buffer.line(i);
    const who = line.rank !== null ? `r${line.rank}` : `n${line.node}`;
    rows.push(
      <div
        key={i}
        className="kale-ext-LogLine"
        data-node={line.node}
        data-rank={line.rank ?? undefined}
      >
        <span
          className={`kale-ext-LogLine-who ${seriesClass(line.rank ?? line.node)}`}
          title={
            line.rank !== null
              ? `rank ${line.rank}, node ${line.node}`
              : `node ${line.node}`
          }
        >
          {who}
        </span>
        <span className="kale-ext-LogLine-text">
          {query ? highlight(line.text, query) : line.text}
        </span>
      </div>
    );
  }
  return (
    <div
      ref={ref}
      className="kale-ext-LogList"
      role="log"
      aria-label={props.label}
      aria-live="off"
      tabIndex={0}
      onScroll={onScroll}
    >
      <div
        className="kale-ext-LogList-space"
        style={{ height: size * ROW_HEIGHT }}
      >
        <div
          className="kale-ext-LogList-rows"
          style={{ transform: `translateY(${first * ROW_HEIGHT}px)` }}
        >
          {rows}
        </div>
      </div>
    </div>
  );
}

/**
 * The text with each occurrence of `query` (case-insensitive) marked.
 */
function highlight(text: string, query: string): React.ReactNode[] {
  const out: React.ReactNode[] = [];
  const lower = text.toLowerCase();
  const q = query.toLowerCase();
  let start = 0;
  for (;;) {
    const i = lower.indexOf(q, start);
    if (i < 0) {
      break;
    }
    out.push(
      text.slice(start, i),
      <mark key={i}>{text.slice(i, i + q.length)}</mark>
    );
    start = i + q.length;
  }
  out.push(text.slice(start));
  return out;
}
