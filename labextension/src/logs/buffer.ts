import { ISignal, Signal } from '@lumino/signaling';

import { isMetricLine } from '../metrics/parse';
import type { Kale } from '../types';

/**
 * Which lines the view shows.
 */
export interface ILogFilter {
  /** One node's lines, or all (null). */
  node: number | null;
  /** One global rank's lines, or all (null). */
  rank: number | null;
  /** Lines containing this text (case-insensitive), or all (''). */
  query: string;
  /**
   * Whether the lines `report()` printed (`KALE_METRIC {...}`) are shown;
   * the metrics view plots them, so by default they are not.
   */
  metrics: boolean;
}

/**
 * The lines of a job's logs, however many: appends are batched (one change
 * per animation frame), and the filtered view is an index kept up to date
 * incrementally, so the view never touches more lines than it shows.
 */
export class LogBuffer {
  constructor(
    options: {
      /** Schedules a flush (default: the next animation frame). */
      schedule?: (flush: () => void) => void;
      /** Lines kept at most; the oldest go first. */
      maxLines?: number;
    } = {}
  ) {
    this._schedule =
      options.schedule ?? (flush => window.requestAnimationFrame(flush));
    this._maxLines = options.maxLines ?? 1_000_000;
  }

  /**
   * Emitted at most once per flush, after lines were added or the filter
   * changed.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get filter(): ILogFilter {
    return this._filter;
  }

  /** All lines held. */
  get total(): number {
    return this._lines.length;
  }

  /** The lines the filter lets through. */
  get size(): number {
    return this._view ? this._view.length : this._lines.length;
  }

  /** The metrics lines held (shown or not). */
  get metricLines(): number {
    return this._metricLines;
  }

  /** The nodes and ranks seen so far, sorted. */
  get nodes(): number[] {
    return [...this._nodes].sort((a, b) => a - b);
  }

  get ranks(): number[] {
    return [...this._ranks].sort((a, b) => a - b);
  }

  /**
   * The i-th line of the filtered view.
   */
  line(i: number): Kale.ILogLine {
    return this._lines[this._view ? this._view[i] : i];
  }

  /**
   * Add lines; they show at the next flush.
   */
  push(lines: Kale.ILogLine[]): void {
    for (const line of lines) {
      this._pending.push(line);
    }
    if (!this._scheduled && this._pending.length > 0) {
      this._scheduled = true;
      this._schedule(() => this.flush());
    }
  }

  /**
   * Move the pending lines in, now.
   */
  flush(): void {
    this._scheduled = false;
    if (this._pending.length === 0) {
      return;
    }
    const pending = this._pending;
    this._pending = [];
    const start = this._lines.length;
    const hadMetrics = this._metricLines > 0;
    for (const line of pending) {
      this._lines.push(line);
      this._nodes.add(line.node);
      if (line.rank !== null) {
        this._ranks.add(line.rank);
      }
      if (isMetricLine(line.text)) {
        this._metricLines++;
      }
    }
    if (!this._view && !hadMetrics && this._metricLines > 0) {
      // The first metrics line: from now on the view is an index.
      this._reindex();
    } else if (this._view) {
      for (let i = start; i < this._lines.length; i++) {
        if (this._matches(this._lines[i])) {
          this._view.push(i);
        }
      }
    }
    if (this._lines.length > this._maxLines) {
      const removed = this._lines.splice(
        0,
        this._lines.length - this._maxLines
      );
      for (const line of removed) {
        if (isMetricLine(line.text)) {
          this._metricLines--;
        }
      }
      this._reindex();
    }
    this._changed.emit();
  }

  setFilter(filter: Partial<ILogFilter>): void {
    this._filter = { ...this._filter, ...filter };
    this._query = this._filter.query.toLowerCase();
    this._reindex();
    this._changed.emit();
  }

  /**
   * The text of the filtered lines, for a download.
   */
  text(): string {
    const out: string[] = [];
    for (let i = 0; i < this.size; i++) {
      out.push(this.line(i).text);
    }
    return out.join('\n') + (out.length ? '\n' : '');
  }

  clear(): void {
    this._lines = [];
    this._pending = [];
    this._nodes.clear();
    this._ranks.clear();
    this._metricLines = 0;
    this._reindex();
    this._changed.emit();
  }

  private _reindex(): void {
    const { node, rank, query, metrics } = this._filter;
    if (
      node === null &&
      rank === null &&
      !query &&
      (metrics || this._metricLines === 0)
    ) {
      this._view = null;
      return;
    }
    const view: number[] = [];
    for (let i = 0; i < this._lines.length; i++) {
      if (this._matches(this._lines[i])) {
        view.push(i);
      }
    }
    this._view = view;
  }

  private _matches(line: Kale.ILogLine): boolean {
    const { node, rank, metrics } = this._filter;
    return (
      (node === null || line.node === node) &&
      (rank === null || line.rank === rank) &&
      (metrics || !isMetricLine(line.text)) &&
      (!this._query || line.text.toLowerCase().includes(this._query))
    );
  }

  private _lines: Kale.ILogLine[] = [];
  private _pending: Kale.ILogLine[] = [];
  private _view: number[] | null = null;
  private _filter: ILogFilter = {
    node: null,
    rank: null,
    query: '',
    metrics: false
  };
  private _metricLines = 0;
  private _query = '';
  private _nodes = new Set<number>();
  private _ranks = new Set<number>();
  private _scheduled = false;
  private _schedule: (flush: () => void) => void;
  private _maxLines: number;
  private _changed = new Signal<this, void>(this);
}
