import { MetricsStore } from '../../metrics/store';
import {
  bestPoint,
  lowerIsBetter,
  meanSeries,
  singleValue
} from '../../metrics/summary';
import { metric } from './lines';

function store(records: Record<string, unknown>[]): MetricsStore {
  const s = new MetricsStore();
  s.push(records.map(r => metric(r, Number(r.rank ?? 0))));
  return s;
}

describe('which metrics are better lower', () => {
  // the same table as tests/test_metrics.py's (kale_ext/metrics.py decides too)
  it.each([
    ['loss', true],
    ['val_loss', true],
    ['trainError', true],
    ['valMSE', true],
    ['top1_err', true],
    ['epoch_time', true],
    ['perplexity', true],
    ['errors', true],
    ['accuracy', false],
    ['f1', false],
    ['lossless', false],
    ['runtime', false],
    ['val/acc', false]
  ])('%s: %s', (name, lower) => {
    expect(lowerIsBetter(name)).toBe(lower);
  });

  it('picks the lowest loss and the highest accuracy, the earliest of equals', () => {
    const points = [
      { step: 1, value: 0.5 },
      { step: 2, value: 0.3 },
      { step: 3, value: 0.3 },
      { step: 4, value: NaN },
      { step: 5, value: 0.4 }
    ];
    expect(bestPoint('loss', points)).toEqual({ step: 2, value: 0.3 });
    expect(bestPoint('accuracy', points)).toEqual({ step: 1, value: 0.5 });
    expect(bestPoint('loss', [{ step: 1, value: Infinity }])).toBeNull();
    expect(bestPoint('loss', [])).toBeNull();
  });
});

describe('the mean of the ranks', () => {
  it.each([
    [
      'at each step',
      [
        { step: 1, rank: 0, loss: 1 },
        { step: 2, rank: 0, loss: 0.5 },
        { step: 1, rank: 1, loss: 3 },
        { step: 2, rank: 1, loss: 1.5 }
      ],
      [
        { step: 1, value: 2 },
        { step: 2, value: 1 }
      ]
    ],
    [
      'interpolating a step a rank skipped',
      [
        { step: 0, rank: 0, loss: 0 },
        { step: 1, rank: 0, loss: 1 },
        { step: 2, rank: 0, loss: 2 },
        { step: 0, rank: 1, loss: 2 },
        { step: 2, rank: 1, loss: 4 }
      ],
      [
        { step: 0, value: 1 },
        { step: 1, value: 2 },
        { step: 2, value: 3 }
      ]
    ],
    [
      'up to where the slowest rank is',
      [
        { step: 1, rank: 0, loss: 1 },
        { step: 2, rank: 0, loss: 1 },
        { step: 3, rank: 0, loss: 1 },
        { step: 1, rank: 1, loss: 3 },
        { step: 2, rank: 1, loss: 3 }
      ],
      [
        { step: 1, value: 2 },
        { step: 2, value: 2 }
      ]
    ],
    ['not for one rank', [{ step: 1, rank: 0, loss: 1 }], []]
  ])('%s', (_, records, mean) => {
    expect(meanSeries(store(records).metric('loss')!)).toEqual(mean);
  });
});

describe('a metric with one value', () => {
  it('is a number at its step, the mean of its ranks', () => {
    const s = store([
      { step: 3, rank: 0, accuracy: 0.9 },
      { step: 3, rank: 1, accuracy: 0.92 },
      { step: 1, rank: 0, loss: 1 },
      { step: 2, rank: 0, loss: 0.5 }
    ]);
    const single = singleValue(s.metric('accuracy')!)!;
    expect(single.value).toBeCloseTo(0.91);
    expect(single.step).toBe(3);
    expect(single.ranks.map(r => r.value)).toEqual([0.9, 0.92]);
    expect(singleValue(s.metric('loss')!)).toBeNull();
  });

  it('names no step when the ranks reported at different ones', () => {
    const s = store([
      { step: 3, rank: 0, accuracy: 0.9 },
      { step: 4, rank: 1, accuracy: 0.92 }
    ]);
    expect(singleValue(s.metric('accuracy')!)!.step).toBeNull();
  });
});
