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
  // Each rank's loss by step; the mean by step.
  type Steps = Record<number, number>;
  const byStep = (values: Steps) =>
    Object.entries(values).map(([step, value]) => ({
      step: Number(step),
      value
    }));
  it.each<[string, Steps[], Steps]>([
    [
      'at each step',
      [
        { 1: 1, 2: 0.5 },
        { 1: 3, 2: 1.5 }
      ],
      { 1: 2, 2: 1 }
    ],
    [
      'interpolating a step a rank skipped',
      [
        { 0: 0, 1: 1, 2: 2 },
        { 0: 2, 2: 4 }
      ],
      { 0: 1, 1: 2, 2: 3 }
    ],
    [
      'up to where the slowest rank is',
      [
        { 1: 1, 2: 1, 3: 1 },
        { 1: 3, 2: 3 }
      ],
      { 1: 2, 2: 2 }
    ],
    ['not for one rank', [{ 1: 1 }], {}]
  ])('%s', (_, ranks, mean) => {
    const records = ranks.flatMap((losses, rank) =>
      byStep(losses).map(({ step, value }) => ({ step, rank, loss: value }))
    );
    expect(meanSeries(store(records).metric('loss')!)).toEqual(byStep(mean));
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
