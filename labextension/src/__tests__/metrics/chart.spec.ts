import { chartLayout, logTicks, niceTicks } from '../../metrics/chart';
import { CHART_SIZE } from '../../metrics/constants';
import { describeMetric } from '../../metrics/format';
import { MetricsStore } from '../../metrics/store';
import type { Kale } from '../../types';
import { metric } from './lines';

function store(lines: Kale.ILogLine[]): MetricsStore {
  const s = new MetricsStore();
  s.push(lines);
  return s;
}

describe('charts', () => {
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
    // their mean, between them
    expect(layout.mean!.drawn).toBe(2);
    expect(layout.mean!.last!.y).toBeGreaterThan(layout.lines[1].last!.y);
    expect(layout.mean!.last!.y).toBeLessThan(layout.lines[0].last!.y);
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
    const plotW = CHART_SIZE.width - CHART_SIZE.left - CHART_SIZE.right;
    for (const l of [...layout.lines, layout.mean!]) {
      expect(l.drawn).toBeLessThanOrEqual(2 * Math.ceil(plotW / 2) + 2);
      expect(l.d.split('L').length).toBe(l.drawn);
    }
  });
});

describe('a log scale', () => {
  const curve = store(
    [0, 1, 2, 3, 4, 5].map(step => metric({ step, rank: 0, loss: 10 ** -step }))
  ).metric('loss')!;

  function heights(d: string): number[] {
    return d
      .slice(1)
      .split(' L')
      .map(p => Number(p.split(' ')[1]));
  }

  it('spreads a curve that flattens on a linear axis', () => {
    const linear = chartLayout(curve);
    const log = chartLayout(curve, CHART_SIZE, { scale: 'log' });
    expect([linear.scale, log.scale]).toEqual(['linear', 'log']);
    expect(log.note).toBe('');
    // linear: after step 2 the points are crushed at the bottom
    const lin = heights(linear.lines[0].d);
    expect(lin[2] - lin[5]).toBeLessThan(2);
    // log: evenly spaced
    const steps = heights(log.lines[0].d)
      .slice(1)
      .map((y, i) => y - heights(log.lines[0].d)[i]);
    expect(Math.max(...steps) - Math.min(...steps)).toBeLessThan(0.5);
    expect(log.yTicks.map(t => t.label)).toEqual([
      '1e-5',
      '1e-4',
      '0.001',
      '0.01',
      '0.1',
      '1'
    ]);
  });

  it('is refused for values not above 0, saying so', () => {
    const s = store([
      metric({ step: 1, rank: 0, delta: 0.5 }),
      metric({ step: 2, rank: 0, delta: -0.25 })
    ]);
    const layout = chartLayout(s.metric('delta')!, CHART_SIZE, {
      scale: 'log'
    });
    expect(layout.scale).toBe('linear');
    expect(layout.note).toBe(
      'Log scale needs values above 0: delta has -0.25. Drawn linear.'
    );
  });

  it.each([
    [-3, 0.2, [0.001, 0.01, 0.1, 1]],
    [-0.7, -0.05, [0.2, 0.4, 0.6, 0.8]],
    [-10.2, 0.1, [1e-10, 1e-8, 1e-6, 1e-4, 0.01, 1]]
  ])('ticks [10^%d, 10^%d] at %j', (low, high, ticks) => {
    expect(logTicks(low, high)).toEqual(ticks);
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
