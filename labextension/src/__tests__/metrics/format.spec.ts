import { describeMetric, formatValue, seriesClass } from '../../metrics/format';
import { MetricsStore } from '../../metrics/store';
import { metric } from './lines';

describe('formatValue', () => {
  it('formats values briefly', () => {
    expect(formatValue(0.312345)).toBe('0.3123');
    expect(formatValue(2)).toBe('2');
    expect(formatValue(1234.5678)).toBe('1235');
    expect(formatValue(0)).toBe('0');
    expect(formatValue(0.00012)).toBe('1.2e-4');
    expect(formatValue(3e7)).toBe('3e+7');
    expect(formatValue(NaN)).toBe('nan'); // as Python prints it
    expect(formatValue(-Infinity)).toBe('-inf');
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
