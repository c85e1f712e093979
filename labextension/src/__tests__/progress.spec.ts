import { formatCount, formatEta, shownProgress } from '../progress/progress';
import type { Kale } from '../types';
import { jobInfo } from './fakes';

const NOW = Date.parse('2026-01-01T00:10:00Z');

function progress(change: Partial<Kale.IProgress> = {}): Kale.IProgress {
  return {
    percent: 38.4,
    step: 384,
    total: 1000,
    unit: 'step',
    eta_seconds: 720,
    source: 'report',
    updated: '2026-01-01T00:09:55Z',
    ...change
  };
}

function running(change: Partial<Kale.IJobInfo> = {}): Kale.IJobInfo {
  return jobInfo(
    'nb-run',
    {},
    { status: 'Running', finished: null, progress: progress(), ...change }
  );
}

describe('formatEta', () => {
  it.each([
    [null, ''],
    [undefined, ''],
    [Number.NaN, ''],
    [-5, ''],
    [0, 'less than a minute left'],
    [44, 'less than a minute left'],
    [45, 'about 1 min left'],
    [720, 'about 12 min left'],
    [3569, 'about 59 min left'],
    [3600, 'about 1 h left'],
    [7500, 'about 2 h 5 min left'],
    [47 * 3600, 'about 47 h left'],
    [3 * 86400, 'about 3 days left']
  ])('%p seconds → %p', (seconds, words) => {
    expect(formatEta(seconds as number | null)).toBe(words);
  });
});

describe('formatCount', () => {
  it.each([
    [{}, 'step 384 of 1,000'],
    [{ unit: 'epoch', step: 38, total: 60 }, 'epoch 38 of 60'],
    [{ total: null }, 'step 384'],
    [{ step: null }, '']
  ] as [Partial<Kale.IProgress>, string][])('%p → %p', (change, text) => {
    expect(formatCount(progress(change))).toBe(text);
  });
});

describe('shownProgress', () => {
  it('shows the percent and the time left of a running job', () => {
    expect(shownProgress(running(), NOW)).toEqual({
      percent: 38.4,
      value: 38,
      label: '38 % · about 12 min left',
      title:
        'Progress from kale_ext.report() · step 384 of 1,000 · time left estimated from the recent rate · updated 5 s ago',
      source: 'report'
    });
  });

  it('shows no time left while the job gives none', () => {
    const shown = shownProgress(
      running({ progress: progress({ eta_seconds: null, percent: 2 }) }),
      NOW
    );
    expect(shown?.label).toBe('2 %');
    expect(shown?.title).toContain(
      'no time left yet: the rate is not known well enough'
    );
  });

  it.each([
    ['queued', { status: 'Queued' }],
    ['created', { status: 'Created' }],
    ['complete', { status: 'Complete' }],
    ['failed', { status: 'Failed' }],
    ['never reported', { progress: null }],
    ['no progress key (an older server)', { progress: undefined }],
    ['percent not a number', { progress: progress({ percent: NaN }) }],
    [
      'percent a string',
      { progress: { ...progress(), percent: '38' as unknown as number } }
    ]
  ] as [string, Partial<Kale.IJobInfo>][])(
    'shows no bar for a job %s',
    (_, change) => {
      expect(shownProgress(running(change), NOW)).toBeNull();
    }
  );

  it('keeps the bar between 0 and 100 and never rounds up to 100', () => {
    const at = (percent: number) =>
      shownProgress(running({ progress: progress({ percent }) }), NOW);
    expect(at(140)).toMatchObject({ percent: 100, value: 100 });
    expect(at(-3)).toMatchObject({ percent: 0, value: 0 });
    expect(at(99.9)).toMatchObject({ percent: 99.9, value: 99 });
  });

  it.each([
    ['report', 'kale_ext.report()'],
    ['tqdm', 'a tqdm bar on rank 0'],
    ['epoch-line', 'the log’s “epoch N/M” lines'],
    ['trainer', 'Kubeflow Trainer’s trainerStatus']
  ] as [Kale.IProgress['source'], string][])(
    'says progress from %s came from %s',
    (source, words) => {
      const shown = shownProgress(
        running({ progress: progress({ source }) }),
        NOW
      );
      expect(shown?.title.startsWith(`Progress from ${words} · `)).toBe(true);
    }
  );
});
