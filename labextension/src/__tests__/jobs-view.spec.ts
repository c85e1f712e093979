import {
  DEFAULT_VIEW,
  FinalMetrics,
  inStatus,
  IJobsView,
  jobDuration,
  jobRows,
  keyParameters,
  metricNames,
  notebookOf,
  restoredView,
  STATUS_FILTERS
} from '../panel/jobs/jobs-view';
import type { Kale } from '../types';
import { jobInfo } from './fakes';

const NOW = Date.parse('2026-01-01T01:00:00Z');

function job(
  name: string,
  extra: Partial<Kale.IJobInfo> & {
    notebook?: string;
    parameters?: object;
  } = {}
): Kale.IJobInfo {
  const { notebook = 'a/nb.ipynb', parameters, ...rest } = extra;
  const provenance = {
    'kale-ext.io/notebook': notebook,
    'kale-ext.io/options': JSON.stringify(parameters ? { parameters } : {})
  };
  return jobInfo(name, provenance, rest);
}

const JOBS = [
  job('six', {
    parameters: { epochs: '6' },
    created: '2026-01-01T00:10:00Z',
    finished: '2026-01-01T00:11:00Z'
  }),
  job('forty', {
    parameters: { epochs: 40, lr: 0.001 },
    created: '2026-01-01T00:20:00Z',
    finished: '2026-01-01T00:30:00Z'
  }),
  job('other', { notebook: 'b/other.ipynb', status: 'Failed' }),
  job('running', {
    status: 'Running',
    created: '2026-01-01T00:59:00Z',
    finished: null
  })
];

const METRICS: Record<string, FinalMetrics> = {
  six: new Map([['accuracy', { value: 0.9, step: 6 }]]),
  forty: new Map([
    ['accuracy', { value: 0.97, step: 40 }],
    ['loss', { value: 0.1, step: 40 }]
  ])
};

function names(
  view: Partial<IJobsView>,
  notebook: string | null = 'a/nb.ipynb'
) {
  return jobRows(
    JOBS,
    { ...DEFAULT_VIEW, ...view },
    {
      notebook,
      now: NOW,
      metrics: n => METRICS[n],
      metric: 'accuracy'
    }
  ).map(r => r.job.name);
}

describe('the jobs list as arranged', () => {
  it("shows this notebook's jobs, newest first, by default", () => {
    expect(names({})).toEqual(['running', 'forty', 'six']);
    expect(names({ filter: 'all' })).toEqual([
      'running',
      'forty',
      'six',
      'other'
    ]);
    // no notebook open: all
    expect(names({}, null)).toHaveLength(4);
  });

  it('shows the jobs in a state, and those whose name holds a text', () => {
    expect(names({ filter: 'all', status: 'failed' })).toEqual(['other']);
    expect(names({ filter: 'all', status: 'running' })).toEqual(['running']);
    expect(names({ status: 'failed' })).toEqual([]); // and of this notebook
    expect(names({ filter: 'all', query: ' T ' })).toEqual(['forty', 'other']);
    expect(names({ filter: 'all', query: 'SIX' })).toEqual(['six']);
    expect(names({ status: 'complete', query: 'i' })).toEqual(['six']);
  });

  it.each([
    // (ties keep the list's order)
    ['duration', false, ['six', 'running', 'forty']],
    ['duration', true, ['forty', 'six', 'running']],
    // best first (the highest accuracy), unknown last either way
    ['metric', false, ['forty', 'six', 'running']],
    ['metric', true, ['six', 'forty', 'running']],
    ['name', false, ['forty', 'running', 'six']],
    ['parameters', false, ['forty', 'six', 'running']], // none last
    ['state', false, ['running', 'six', 'forty']]
  ] as const)('sorts by %s (descending: %s)', (sort, descending, expected) => {
    expect(names({ sort, descending })).toEqual(expected);
  });

  it('sorts a loss-like metric lowest first, as the charts call it best', () => {
    const losses: Record<string, FinalMetrics> = {
      six: new Map([['val_loss', { value: 0.3, step: 6 }]]),
      forty: new Map([['val_loss', { value: 0.1, step: 40 }]]),
      running: new Map([['val_loss', { value: 0.2, step: 3 }]])
    };
    const order = (descending: boolean) =>
      jobRows(
        JOBS,
        { ...DEFAULT_VIEW, sort: 'metric', descending },
        {
          notebook: 'a/nb.ipynb',
          now: NOW,
          metrics: n => losses[n],
          metric: 'val_loss'
        }
      ).map(r => r.job.name);
    expect(order(false)).toEqual(['forty', 'running', 'six']);
    expect(order(true)).toEqual(['six', 'running', 'forty']);
  });

  it('gives each row its parameters, duration and metric', () => {
    const [running, forty] = jobRows(JOBS, DEFAULT_VIEW, {
      notebook: 'a/nb.ipynb',
      now: NOW,
      metrics: n => METRICS[n],
      metric: 'accuracy'
    });
    expect(forty).toMatchObject({
      parameters: 'epochs=40, lr=0.001',
      duration: 600_000,
      metric: 0.97
    });
    expect(running).toMatchObject({
      parameters: '',
      duration: 60_000, // so far
      metric: null
    });
  });
});

describe('a job’s facts', () => {
  it('reads the notebook and parameters from its provenance', () => {
    expect(notebookOf(JOBS[2])).toBe('b/other.ipynb');
    expect(keyParameters(JOBS[0])).toBe('epochs=6');
    expect(keyParameters({ ...JOBS[0], provenance: {} })).toBe('');
    expect(
      keyParameters({
        ...JOBS[0],
        provenance: { 'kale-ext.io/options': 'not json' }
      })
    ).toBe('');
  });

  it('knows no duration without a start, or an end for an ended job', () => {
    expect(jobDuration({ ...JOBS[0], created: null }, NOW)).toBeNull();
    expect(jobDuration({ ...JOBS[0], finished: null }, NOW)).toBeNull();
  });

  it('names the metrics the jobs reported, in the order seen', () => {
    expect(metricNames(Object.values(METRICS))).toEqual(['accuracy', 'loss']);
  });
});

describe('a job in a state, as `kale-ext jobs --status` says it', () => {
  const stalled = job('stalled', {
    status: 'Running',
    stalled_after: 600,
    status_text: 'Stalled (no output for 10 min)'
  });
  const stopped = job('stopped', {
    status: 'Failed',
    status_text: 'Stopped',
    reason: 'stopped by ann at 2026-12-06T08:00:00Z'
  });
  const states = (j: Kale.IJobInfo) =>
    STATUS_FILTERS.filter(status => inStatus(j, status));

  it.each(
    [
      [job('c'), ['complete']],
      [job('f', { status: 'Failed' }), ['failed']],
      [job('r', { status: 'Running' }), ['running']],
      [stalled, ['running', 'stalled']], // running holds the stalled
      [stopped, ['stopped']], // not among the failed
      [
        job('q', { status: 'Queued', status_text: 'Queued (waiting)' }),
        ['queued']
      ],
      [job('n', { status: 'Created' }), ['created']],
      [job('u', { status: 'Unreadable' }), ['unreadable']]
    ].map(([j, expected]) => [(j as Kale.IJobInfo).name, expected, j])
  )('job %s is in %j', (_, expected, j) => {
    expect(states(j as Kale.IJobInfo)).toEqual(expected);
  });
});

describe('a kept arrangement, read back', () => {
  it('keeps what is valid and takes the default for the rest', () => {
    const kept = {
      filter: 'all',
      status: 'stalled',
      query: 'mnist',
      sort: 'name',
      descending: false,
      metric: 'loss'
    } as const;
    expect(restoredView(kept)).toEqual(kept);
    // an older version's: no filters yet
    expect(restoredView({ filter: 'all', sort: 'duration' })).toEqual({
      ...DEFAULT_VIEW,
      filter: 'all',
      sort: 'duration'
    });
    expect(restoredView(undefined)).toEqual(DEFAULT_VIEW);
    const edited = {
      filter: 'mine',
      status: 'sleeping',
      query: 42,
      sort: 'colour',
      descending: 'yes',
      metric: 7
    } as unknown as Partial<IJobsView>;
    expect(restoredView(edited)).toEqual(DEFAULT_VIEW);
  });
});
