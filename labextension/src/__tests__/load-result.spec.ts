import { ISaved, loadOffer, resultCellSource } from '../results/load-result';
import type { Kale } from '../types';
import { jobInfo } from './fakes';

const saved = (
  result: Partial<Kale.IJobResult> | null,
  files: number | null = 0
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
      saved({ saved: false, reason: 'the function returned None' }, 0),
      {
        enabled: false,
        withResult: false,
        title: 'No result was saved: the function returned None'
      }
    ],
    [
      'Complete',
      saved({ saved: false, reason: 'the function returned None' }, 3),
      {
        enabled: true,
        withResult: false,
        title:
          'No result was saved: the function returned None. Insert a cell that lists its 3 output files'
      }
    ],
    [
      'Failed',
      saved(null, 1),
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
  it('loads the result, with the outputs a line away', () => {
    expect(resultCellSource('digits-ddp-k3v9q', true)).toBe(
      [
        'from kale_ext import get_job',
        'result = get_job("digits-ddp-k3v9q").result()',
        '# get_job("digits-ddp-k3v9q").outputs  # the files it wrote; .load("name") reads one'
      ].join('\n')
    );
  });

  it('lists the outputs when no result was saved', () => {
    expect(resultCellSource('j', false)).toBe(
      'from kale_ext import get_job\noutputs = get_job("j").outputs  # it saved no result; .load("name") reads a file'
    );
  });

  it('writes any name as a Python string literal', () => {
    expect(resultCellSource('a"b\\c', true).split('\n')[1]).toBe(
      'result = get_job("a\\"b\\\\c").result()'
    );
  });
});
