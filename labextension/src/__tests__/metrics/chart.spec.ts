import { chartLayout, niceTicks } from '../../metrics/chart';
import { describeMetric } from '../../metrics/format';
import { MetricsStore } from '../../metrics/store';
import type { Kale } from '../../types';
import { metric } from './lines';

describe('charts', () => {
  function store(lines: Kale.ILogLine[]): MetricsStore {
    const s = new MetricsStore();
    s.push(lines);
    return s;
  }

  it('lays out a line per rank inside the plot area', () => {
    const s = store([
      metric({ step: 1, rank: 0, loss: 1.2 }),
      metric({ step: 2, rank: 0, loss: 0.4 }),
      metric({ step: 1, rank: 1, loss: 1.1 }, 1),
      metric({ step: 2, rank: 1, loss: 0.5 }, 1)
    ]);
    const layout = chartLayout(s.metric('loss')!);
    const { size } = layout;
    expect(layout.lines.map(l => l.rank)).toEqual([0, 1]);
    expect(layout.lines[0].d).toMatch(/^M[\d.]+ [\d.]+ L[\d.]+ [\d.]+$/);
    for (const l of layout.lines) {
      const last = l.last!;
      expect(last.x).toBeCloseTo(size.width - size.right, 0);
      expect(last.y).toBeGreaterThanOrEqual(size.top);
      expect(last.y).toBeLessThanOrEqual(size.height - size.bottom);
    }
    expect(layout.y.min).toBeLessThanOrEqual(0.4);
    expect(layout.y.max).toBeGreaterThanOrEqual(1.2);
    expect(layout.xTicks.map(t => t.label)).toEqual(['1', '2']);
    expect(layout.yTicks.map(t => t.label)).toEqual(['0.5', '1']);
    for (const t of layout.yTicks) {
      expect(t.y).toBeGreaterThanOrEqual(size.top);
      expect(t.y).toBeLessThanOrEqual(size.height - size.bottom);
    }
    expect(describeMetric(s.metric('loss')!)).toBe(
      'loss, latest: rank 0 0.4 at step 2, rank 1 0.5 at step 2'
    );
  });

  it('draws a single value as a dot', () => {
    const s = store([metric({ step: 2, rank: 0, accuracy: 0.97 })]);
    const layout = chartLayout(s.metric('accuracy')!);
    expect(layout.lines[0].drawn).toBe(1);
    expect(layout.lines[0].last).not.toBeNull();
    expect(layout.y.min).toBeLessThan(0.97);
    expect(layout.y.max).toBeGreaterThan(0.97);
  });

  it('draws thousands of points with a few hundred', () => {
    const lines: Kale.ILogLine[] = [];
    for (let step = 0; step < 20_000; step++) {
      lines.push(metric({ step, rank: 0, loss: 1 / (step + 1) }));
      lines.push(metric({ step, rank: 1, loss: 2 / (step + 1) }, 1));
    }
    const layout = chartLayout(store(lines).metric('loss')!);
    for (const l of layout.lines) {
      expect(l.drawn).toBeLessThanOrEqual(2 * 114 + 2);
      expect(l.d.split('L').length).toBe(l.drawn);
    }
  });
});

describe('niceTicks', () => {
  it('picks round ticks', () => {
    expect(niceTicks(0.4, 1.2, 3)).toEqual([0, 0.5, 1, 1.5]);
    expect(niceTicks(0.4, 1.2, 4)).toEqual([0.4, 0.6, 0.8, 1, 1.2]);
    expect(niceTicks(0, 10, 2)).toEqual([0, 5, 10]);
    expect(niceTicks(1, 2, 4, true)).toEqual([1, 2]);
    expect(niceTicks(3, 3, 3)).toEqual([3]);
  });
});
