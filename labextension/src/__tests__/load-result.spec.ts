import { ISaved, loadOffer, resultCellSource } from '../results/load-result';
import type { Kale } from '../types';
import { jobInfo } from './fakes';

const saved = (
  result: Partial<Kale.IJobResult> | null,
  files: string[] | null = []
): ISaved => ({
  result: result && {
    saved: true,
    format: 'json',
    size: 2048,
    reason: null,
    ...result
  },
  files
});

describe('loadOffer', () => {
  it.each([
    ['Running', undefined, null],
    ['Queued', undefined, null],
    [
      'Complete',
      undefined,
      {
        enabled: false,
        withResult: false,
        title: 'Reading what the job saved…'
      }
    ],
    [
      'Complete',
      saved({}),
      {
        enabled: true,
        withResult: true,
        title:
          'Insert a cell below the active cell that loads its result (json, 2 KiB)'
      }
    ],
    [
      'Complete',
      saved({ saved: false, reason: 'the function returned None' }, []),
      {
        enabled: false,
        withResult: false,
        title: 'No result was saved: the function returned None'
      }
    ],
    [
      'Complete',
      saved({ saved: false, reason: 'the function returned None' }, [
        'a',
        'b',
        'c'
      ]),
      {
        enabled: true,
        withResult: false,
        title:
          'No result was saved: the function returned None. Insert a cell that lists its 3 output files'
      }
    ],
    [
      'Failed',
      saved(null, ['a.pt']),
      {
        enabled: true,
        withResult: false,
        title: 'No result was saved. Insert a cell that lists its 1 output file'
      }
    ],
    [
      'Complete',
      saved(null, null),
      { enabled: false, withResult: false, title: 'No result was saved' }
    ]
  ] as [Kale.JobStatus, ISaved | undefined, unknown][])(
    'a %s job that saved %j: %j',
    (status, what, offer) => {
      expect(loadOffer(jobInfo('j', {}, { status }), what)).toEqual(offer);
    }
  );
});

describe('resultCellSource', () => {
  it('loads the result and shows it, with the outputs a line away', () => {
    expect(resultCellSource('digits-ddp-k3v9q', saved({}))).toBe(
      [
        'from kale_ext import get_job',
        'result = get_job("digits-ddp-k3v9q").result()',
        '# get_job("digits-ddp-k3v9q").outputs: the files it wrote; .load("name") reads one',
        'result'
      ].join('\n')
    );
  });

  it('names the files it wrote when no result was saved, and shows them', () => {
    const none = saved({ saved: false, reason: 'the function returned None' }, [
      'digits_model.pt'
    ]);
    expect(resultCellSource('j', none)).toBe(
      [
        'from kale_ext import get_job',
        '# j saved no result (the function returned None); it wrote 1 output file: digits_model.pt',
        'outputs = get_job("j").outputs',
        '# outputs.load("digits_model.pt") reads one',
        'outputs'
      ].join('\n')
    );
  });

  it('names five files at most', () => {
    const many = saved(
      null,
      Array.from({ length: 7 }, (_, i) => `f${i}.pt`)
    );
    expect(resultCellSource('j', many).split('\n')[1]).toBe(
      '# j saved no result; it wrote 7 output files: f0.pt, f1.pt, f2.pt, f3.pt, f4.pt, … (7 output files)'
    );
  });

  it('writes any name as a Python string literal', () => {
    expect(resultCellSource('a"b\\c', saved({})).split('\n')[1]).toBe(
      'result = get_job("a\\"b\\\\c").result()'
    );
  });
});
