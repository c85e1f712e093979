import {
  describeNode,
  formatDuration,
  JobTimeline,
  JobTimelines,
  phaseOf
} from '../timeline';
import type { Kale } from '../types';

function job(
  status: Kale.JobStatus,
  nodes: [string, string?][] = [],
  extra: Partial<Kale.IJobInfo> = {}
): Kale.IJobInfo {
  return {
    name: 'job',
    status,
    backend: 'local',
    runtime: 'torch-distributed',
    num_nodes: Math.max(nodes.length, 1),
    procs_per_node: 1,
    nodes: nodes.map(([state, reason], index) => ({
      index,
      state,
      reason: reason ?? null
    })),
    created: null,
    finished: null,
    ...extra
  };
}

describe('phaseOf', () => {
  it('maps node states, and the job status where nodes say nothing', () => {
    expect(phaseOf(job('Created'), 0)).toBe('queued');
    expect(phaseOf(job('Queued', [['Pending']]), 0)).toBe('queued');
    expect(
      phaseOf(job('Queued', [['Pending', 'Unschedulable: 0/3 nodes']]), 0)
    ).toBe('queued');
    expect(phaseOf(job('Queued', [['Pending', 'ContainerCreating']]), 0)).toBe(
      'pending'
    );
    expect(
      phaseOf(job('Queued', [['Pending', 'ErrImagePull: not found']]), 0)
    ).toBe('pending');
    expect(phaseOf(job('Running', [['Pending']]), 0)).toBe('pending');
    expect(phaseOf(job('Running', [['Running']]), 0)).toBe('running');
    expect(phaseOf(job('Running', [['Succeeded']]), 0)).toBe('done');
    expect(phaseOf(job('Failed', [['Failed']]), 0)).toBe('failed');
    expect(phaseOf(job('Complete'), 1)).toBe('done');
    expect(phaseOf(job('Failed', [['Running']]), 0)).toBe('running');
    expect(phaseOf(job('Failed', [['Unknown']]), 0)).toBe('failed');
    expect(phaseOf(job('Running'), 0)).toBe('pending');
  });
});

describe('JobTimeline', () => {
  it('ends with the job, not with its nodes: a poll that finds the pods done but the job still running is not its last', () => {
    const t = new JobTimeline('job');
    t.observe(job('Running', [['Running'], ['Running']]), 1000);
    t.observe(job('Running', [['Succeeded'], ['Succeeded']]), 2000);
    expect(t.final).toBe(false);
    t.observe(job('Complete', [['Succeeded'], ['Succeeded']]), 3000);
    expect(t.final).toBe(true);
    expect(t.job?.status).toBe('Complete');
    expect(t.segments(1)).toEqual([
      { phase: 'running', start: 1000, end: 2000 },
      { phase: 'done', start: 2000, end: 3000 }
    ]);
  });

  it('records the phases each node was seen in, poll by poll', () => {
    const t = new JobTimeline('job');
    expect(t.start).toBeNull();
    const two = (a: string, b: string, status: Kale.JobStatus = 'Running') =>
      job(status, [[a], [b]]);
    t.observe(two('Pending', 'Pending', 'Created'), 1000);
    t.observe(two('Pending', 'Pending', 'Created'), 2000);
    t.observe(two('Running', 'Pending'), 3000);
    t.observe(two('Running', 'Running'), 5000);
    t.observe(two('Succeeded', 'Running'), 9000);
    expect(t.final).toBe(false);
    t.observe(two('Succeeded', 'Succeeded', 'Complete'), 10_000);
    expect(t.final).toBe(true);
    expect(t.nodes).toEqual([0, 1]);
    expect(t.segments(0)).toEqual([
      { phase: 'queued', start: 1000, end: 3000 },
      { phase: 'running', start: 3000, end: 9000 },
      { phase: 'done', start: 9000, end: 10_000 }
    ]);
    expect(t.segments(1)).toEqual([
      { phase: 'queued', start: 1000, end: 3000 },
      { phase: 'pending', start: 3000, end: 5000 },
      { phase: 'running', start: 5000, end: 10_000 },
      { phase: 'done', start: 10_000, end: 10_000 }
    ]);
    expect(t.durations(1)).toEqual({
      queued: 2000,
      pending: 2000,
      running: 5000,
      done: 0
    });
    expect(describeNode(t, 1)).toBe(
      'node 1: queued 2s, pulling / pending 2s, running 5s, done'
    );
    expect(t.start).toBe(1000);
    expect(t.lastSeen).toBe(10_000);
    expect(t.status).toBe('Complete');
    // Nothing changes after the end, or from an older answer.
    expect(t.observe(two('Running', 'Running'), 11_000)).toBe(false);
    expect(t.segments(0)).toHaveLength(3);
  });

  it('ignores answers older than the latest', () => {
    const t = new JobTimeline('job');
    t.observe(job('Running', [['Running']]), 5000);
    expect(t.observe(job('Queued', [['Pending']]), 4000)).toBe(false);
    expect(t.segments(0)).toEqual([
      { phase: 'running', start: 5000, end: 5000 }
    ]);
  });

  it('covers every node of the job, reported or not', () => {
    const t = new JobTimeline('job');
    t.observe(job('Created', [], { num_nodes: 3 }), 0);
    expect(t.nodes).toEqual([0, 1, 2]);
    expect(describeNode(t, 2)).toBe('node 2: queued 0s');
    expect(describeNode(t, 7)).toBe('node 7: not observed');
  });

  it('a job first seen finished has only its end', () => {
    const t = new JobTimeline('job');
    t.observe(job('Failed', [['Failed'], ['Succeeded']]), 0);
    expect(t.final).toBe(true);
    expect(describeNode(t, 0)).toBe('node 0: failed');
    expect(describeNode(t, 1)).toBe('node 1: done');
  });
});

describe('JobTimelines', () => {
  it('feeds a timeline per job and tells which changed', () => {
    let now = 0;
    const timelines = new JobTimelines({ maxJobs: 2, now: () => now });
    const changed: string[][] = [];
    timelines.changed.connect((_, names) => changed.push(names));
    timelines.observe([
      { ...job('Running'), name: 'a' },
      { ...job('Complete'), name: 'b' }
    ]);
    now = 1000;
    timelines.observe([
      { ...job('Complete'), name: 'a' },
      { ...job('Complete'), name: 'b' }
    ]);
    expect(changed).toEqual([['a', 'b'], ['a']]);
    expect(timelines.get('a')!.segments(0)).toEqual([
      { phase: 'pending', start: 0, end: 1000 },
      { phase: 'done', start: 1000, end: 1000 }
    ]);
    now = 2000;
    timelines.observe({ ...job('Queued'), name: 'c' });
    expect(timelines.get('a')).toBeUndefined(); // the oldest goes
    expect(timelines.get('c')!.segments(0)).toEqual([
      { phase: 'queued', start: 2000, end: 2000 }
    ]);
    expect(changed[2]).toEqual(['c']);
  });
});

describe('formatDuration', () => {
  it.each([
    [400, '0.4s'],
    [2000, '2s'],
    [12_400, '12s'],
    [185_000, '3m 05s'],
    [3_720_000, '1h 02m'],
    [-5, '0s']
  ])('is brief: %p ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
