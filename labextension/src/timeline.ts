import { ISignal, Signal } from '@lumino/signaling';

import { CappedMap } from './capped';
import type { Kale } from './types';

/**
 * A per-node timeline of a job's phases, as the panel observes them by
 * polling the job's status: each poll says, for every node, which phase it
 * is in; a phase lasts from the poll that first saw it to the poll that saw
 * the next one. Nothing is inferred between polls or before the first one.
 */

/**
 * A node's phase.
 */
export type Phase = 'queued' | 'pending' | 'running' | 'done' | 'failed';

export const PHASES: Phase[] = [
  'queued',
  'pending',
  'running',
  'done',
  'failed'
];

export const PHASE_LABELS: Record<Phase, string> = {
  queued: 'queued',
  pending: 'pulling / pending',
  running: 'running',
  done: 'done',
  failed: 'failed'
};

const FINAL = new Set<Phase>(['done', 'failed']);

/**
 * A scheduled pod that is starting (pulling its image, creating the
 * container, running init containers) rather than waiting for room.
 */
const STARTING = /pull|ContainerCreating|PodInitializing|Init:/i;

/**
 * The phase of node `index` in a job's status: the node's own state when the
 * job reports one, else the job's.
 */
export function phaseOf(job: Kale.IJobInfo, index: number): Phase {
  const node = job.nodes?.find(n => n.index === index);
  const state = node?.state ?? '';
  if (state === 'Running') {
    return 'running';
  }
  if (state === 'Succeeded') {
    return 'done';
  }
  if (state === 'Failed') {
    return 'failed';
  }
  if (job.status === 'Complete') {
    return 'done';
  }
  if (job.status === 'Failed') {
    return 'failed';
  }
  const waiting = job.status === 'Created' || job.status === 'Queued';
  if (state === 'Pending') {
    return waiting && !STARTING.test(node?.reason ?? '') ? 'queued' : 'pending';
  }
  return waiting ? 'queued' : 'pending';
}

/**
 * A stretch of one phase; `end` is the poll that saw the next phase, or the
 * latest poll.
 */
export interface ISegment {
  phase: Phase;
  start: number;
  end: number;
}

/**
 * The observed phases of one job's nodes.
 */
export class JobTimeline {
  constructor(readonly name: string) {}

  /** When the first poll saw the job (ms since the epoch), or null. */
  get start(): number | null {
    return this._start;
  }

  /** When the latest poll saw the job. */
  get lastSeen(): number | null {
    return this._last;
  }

  /** Whether every node reached its end (later polls change nothing). */
  get final(): boolean {
    return this._final;
  }

  /** The job's status at the latest poll. */
  get status(): Kale.JobStatus | null {
    return this._status;
  }

  /** The job as the latest poll answered (null before the first). */
  get job(): Kale.IJobInfo | null {
    return this._job;
  }

  /** The node indices seen. */
  get nodes(): number[] {
    return [...this._nodes.keys()].sort((a, b) => a - b);
  }

  /**
   * Record a poll's answer, received at `now`. An answer older than the
   * latest one, or any after the job ended, is ignored. Returns whether the
   * timeline changed.
   */
  observe(job: Kale.IJobInfo, now: number): boolean {
    if (this._final || (this._last !== null && now < this._last)) {
      return false;
    }
    if (this._start === null) {
      this._start = now;
    }
    this._last = now;
    this._status = job.status;
    this._job = job;
    const count = Math.max(
      job.num_nodes || 0,
      ...(job.nodes ?? []).map(n => n.index + 1),
      1
    );
    let final = true;
    for (let index = 0; index < count; index++) {
      const phase = phaseOf(job, index);
      let segments = this._nodes.get(index);
      if (!segments) {
        segments = [];
        this._nodes.set(index, segments);
      }
      const current = segments[segments.length - 1];
      if (current && current.phase === phase) {
        current.end = now;
      } else {
        if (current) {
          current.end = now;
        }
        segments.push({ phase, start: now, end: now });
      }
      final = final && FINAL.has(phase);
    }
    // the job's own end too: on a cluster, its pods can have succeeded in a
    // poll that still finds the TrainJob running (read a moment earlier), and
    // a timeline final then would keep that answer, Running, for good
    this._final =
      final && (job.status === 'Complete' || job.status === 'Failed');
    return true;
  }

  /**
   * The segments of one node, oldest first.
   */
  segments(index: number): readonly ISegment[] {
    return this._nodes.get(index) ?? [];
  }

  /**
   * Milliseconds spent in each phase by a node (a final phase counts as
   * zero: it is where the node stopped, not time spent).
   */
  durations(index: number): Partial<Record<Phase, number>> {
    const out: Partial<Record<Phase, number>> = {};
    for (const s of this.segments(index)) {
      const ms = FINAL.has(s.phase) ? 0 : s.end - s.start;
      out[s.phase] = (out[s.phase] ?? 0) + ms;
    }
    return out;
  }

  private _nodes = new Map<number, ISegment[]>();
  private _start: number | null = null;
  private _last: number | null = null;
  private _final = false;
  private _status: Kale.JobStatus | null = null;
  private _job: Kale.IJobInfo | null = null;
}

/**
 * The timelines of the jobs seen by this page, fed by every poll (the jobs
 * list and the logs views).
 */
export class JobTimelines {
  constructor(options: { maxJobs?: number; now?: () => number } = {}) {
    this._timelines = new CappedMap(options.maxJobs ?? 500);
    this._now = options.now ?? Date.now;
  }

  /** Emitted after a poll changed a timeline; the args name the jobs. */
  get changed(): ISignal<this, string[]> {
    return this._changed;
  }

  get(name: string): JobTimeline | undefined {
    return this._timelines.get(name);
  }

  /**
   * Record a poll's answer (one job, or the whole list).
   */
  observe(jobs: Kale.IJobInfo | Kale.IJobInfo[], now = this._now()): void {
    const changed: string[] = [];
    for (const job of Array.isArray(jobs) ? jobs : [jobs]) {
      let timeline = this._timelines.get(job.name);
      if (!timeline) {
        timeline = new JobTimeline(job.name);
        this._timelines.set(job.name, timeline);
      }
      if (timeline.observe(job, now)) {
        changed.push(job.name);
      }
    }
    if (changed.length) {
      this._changed.emit(changed);
    }
  }

  /** The last maxJobs jobs seen. */
  private _timelines: CappedMap<string, JobTimeline>;
  private _now: () => number;
  private _changed = new Signal<this, string[]>(this);
}

/**
 * A duration, briefly: "0.4s", "12s", "3m 05s", "1h 02m".
 */
export function formatDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) {
    return `${Number(s.toFixed(1))}s`;
  }
  if (s < 60) {
    return `${Math.round(s)}s`;
  }
  const total = Math.round(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  return h
    ? `${h}h ${String(m).padStart(2, '0')}m`
    : `${m}m ${String(sec).padStart(2, '0')}s`;
}

/**
 * A node's timeline in words: "node 0: queued 2s, running 41s, done".
 */
export function describeNode(timeline: JobTimeline, index: number): string {
  const segments = timeline.segments(index);
  if (!segments.length) {
    return `node ${index}: not observed`;
  }
  const durations = timeline.durations(index);
  const seen = [...new Set(segments.map(s => s.phase))];
  const parts = seen.map(p =>
    FINAL.has(p)
      ? PHASE_LABELS[p]
      : `${PHASE_LABELS[p]} ${formatDuration(durations[p]!)}`
  );
  return `node ${index}: ${parts.join(', ')}`;
}
