import { describeMetric, formatValue, seriesClass } from '../../metrics/format';
import { MetricsStore } from '../../metrics/store';
import { metric } from './lines';

describe('formatValue', () => {
  it.each([
    [0.312345, '0.3123'],
    [2, '2'],
    [1234.5678, '1235'],
    [0, '0'],
    [0.00012, '1.2e-4'],
    [3e7, '3e+7'],
    [NaN, 'nan'], // as Python prints it
    [-Infinity, '-inf']
  ])('formats %p briefly: %s', (value, text) => {
    expect(formatValue(value)).toBe(text);
  });
});

describe('describeMetric', () => {
  it("names each rank's latest value and step, for the chart's accessible name", () => {
    const store = new MetricsStore();
    store.push([
      metric({ step: 1, rank: 1, loss: 0.25 }, 1),
      metric({ step: 3, rank: 0, loss: 1e-5 })
    ]);
    expect(describeMetric(store.metric('loss')!)).toBe(
      'loss, latest: rank 0 1e-5 at step 3, rank 1 0.25 at step 1'
    );
    expect(
      describeMetric({ name: 'loss', series: new Map(), version: 0 })
    ).toBe('loss: no values yet');
  });
});

describe('seriesClass', () => {
  it('gives ranks the colours in turn, a rank and its log lines the same', () => {
    expect([0, 1, 7, 8, 9].map(seriesClass)).toEqual([
      'kale-ext-who-0',
      'kale-ext-who-1',
      'kale-ext-who-7',
      'kale-ext-who-0',
      'kale-ext-who-1'
    ]);
  });
});
