import { LogBuffer } from '../logs/buffer';
import {
  chartLayout,
  describeMetric,
  downsample,
  formatValue,
  IPoint,
  isMetricLine,
  MetricsStore,
  niceTicks,
  parseMetric
} from '../metrics';
import type { Kale } from '../types';

function line(
  text: string,
  node = 0,
  rank: number | null = node
): Kale.ILogLine {
  return { node, rank, text, offset: 0 };
}

function metric(record: Record<string, unknown>, node = 0): Kale.ILogLine {
  return line(`KALE_METRIC ${JSON.stringify(record)}`, node);
}

describe('parseMetric', () => {
  it('reads what kale_ext.report() prints', () => {
    const r = parseMetric(
      'KALE_METRIC {"step": 1, "rank": 0, "loss": 0.31, "accuracy": 0.92}'
    )!;
    expect(r.step).toBe(1);
    expect(r.rank).toBe(0);
    expect([...r.values]).toEqual([
      ['loss', 0.31],
      ['accuracy', 0.92]
    ]);
  });

  it('ignores other and malformed lines', () => {
    for (const text of [
      'loss 0.5',
      ' KALE_METRIC {"loss": 1}',
      'KALE_METRIC',
      'KALE_METRIC {broken',
      'KALE_METRIC [1, 2]',
      'KALE_METRIC "loss"',
      'KALE_METRIC null',
      'KALE_METRIC {"loss": 1} trailing',
      'KALE_METRIC {"step": NaNa}'
    ]) {
      expect(parseMetric(text)).toBeNull();
    }
  });

  it('keeps numbers only; a missing or bad step or rank is null', () => {
    const r = parseMetric(
      'KALE_METRIC {"step": "one", "rank": -1, "loss": 2, "note": "hi", "ok": true, "nested": {"a": 1}}'
    )!;
    expect(r.step).toBeNull();
    expect(r.rank).toBeNull();
    expect([...r.values]).toEqual([['loss', 2]]);
    expect(parseMetric('KALE_METRIC {"loss": 1}')!.step).toBeNull();
  });

  it("reads Python's NaN and Infinity", () => {
    const r = parseMetric(
      'KALE_METRIC {"step": 3, "rank": 1, "loss": NaN, "grad": Infinity, "low": -Infinity, "name": "NaN, here"}'
    )!;
    expect(r.values.get('loss')).toBeNaN();
    expect(r.values.get('grad')).toBe(Infinity);
    expect(r.values.get('low')).toBe(-Infinity);
    expect(r.values.has('name')).toBe(false);
  });

  it('tells metrics lines by their prefix', () => {
    expect(isMetricLine('KALE_METRIC {}')).toBe(true);
    expect(isMetricLine('[rank 0] KALE_METRIC {}')).toBe(false);
  });
});

describe('MetricsStore', () => {
  it('builds a series per metric and rank, sorted by step', () => {
    const store = new MetricsStore();
    expect(
      store.push([
        line('[rank 0] epoch 1/2 loss 0.900'),
        metric({ step: 1, rank: 0, loss: 0.9 }),
        metric({ step: 1, rank: 1, loss: 0.95 }, 1),
        metric({ step: 2, rank: 1, loss: 0.5 }, 1),
        metric({ step: 2, rank: 0, loss: 0.4 }),
        metric({ step: 2, rank: 0, accuracy: 0.97 }),
        line('KALE_METRIC {broken')
      ])
    ).toBe(true);
    expect(store.metrics.map(m => m.name)).toEqual(['loss', 'accuracy']);
    expect(store.lineCount).toBe(6);
    const loss = store.metric('loss')!;
    expect([...loss.series.keys()]).toEqual([0, 1]);
    expect(loss.series.get(0)!.points).toEqual([
      { step: 1, value: 0.9 },
      { step: 2, value: 0.4 }
    ]);
    expect(loss.series.get(1)!.latest).toEqual({ step: 2, value: 0.5 });
    expect(store.metric('accuracy')!.series.get(0)!.points).toEqual([
      { step: 2, value: 0.97 }
    ]);
    expect(store.push([line('nothing here')])).toBe(false);
  });

  it("takes the record's rank, else the line's, else its node", () => {
    const store = new MetricsStore();
    store.push([
      line('KALE_METRIC {"rank": 5, "loss": 1}', 1, 3),
      line('KALE_METRIC {"loss": 2}', 1, 3),
      line('KALE_METRIC {"loss": 3}', 2, null)
    ]);
    expect([...store.metric('loss')!.series.keys()]).toEqual([2, 3, 5]);
  });

  it('numbers steps itself when none is given, and keeps ranks apart', () => {
    const store = new MetricsStore();
    for (let i = 0; i < 3; i++) {
      store.push([
        line(`KALE_METRIC {"rank": 0, "loss": ${i}}`),
        line(`KALE_METRIC {"rank": 1, "loss": ${10 + i}}`, 1)
      ]);
    }
    const loss = store.metric('loss')!;
    expect(loss.series.get(0)!.points.map(p => p.step)).toEqual([0, 1, 2]);
    expect(loss.series.get(1)!.points.map(p => p.value)).toEqual([10, 11, 12]);
  });

  it('orders late steps and replaces a repeated last step', () => {
    const store = new MetricsStore();
    store.push([
      metric({ step: 1, loss: 1 }),
      metric({ step: 3, loss: 3 }),
      metric({ step: 2, loss: 2 }),
      metric({ step: 3, loss: 2.5 })
    ]);
    const series = store.metric('loss')!.series.get(0)!;
    expect(series.points).toEqual([
      { step: 1, value: 1 },
      { step: 2, value: 2 },
      { step: 3, value: 2.5 }
    ]);
    expect(series.latest).toEqual({ step: 3, value: 2.5 });
  });

  it('shows a non-finite latest value without plotting it', () => {
    const store = new MetricsStore();
    store.push([
      metric({ step: 1, loss: 1 }),
      line('KALE_METRIC {"step": 2, "rank": 0, "loss": NaN}')
    ]);
    const loss = store.metric('loss')!;
    expect(loss.series.get(0)!.points).toHaveLength(1);
    expect(describeMetric(loss)).toBe('loss, latest: rank 0 NaN at step 2');
  });

  it('stays bounded however many points come', () => {
    const store = new MetricsStore({ maxPoints: 1000 });
    const lines: Kale.ILogLine[] = [];
    for (let step = 0; step < 10_000; step++) {
      lines.push(metric({ step, rank: 0, loss: step === 7777 ? 99 : 1 }));
    }
    store.push(lines);
    const series = store.metric('loss')!.series.get(0)!;
    expect(series.points.length).toBeLessThanOrEqual(1000);
    expect(series.points[0].step).toBe(0);
    expect(series.points[series.points.length - 1].step).toBe(9999);
    expect(series.points.some(p => p.value === 99)).toBe(true); // the spike
    expect(series.latest).toEqual({ step: 9999, value: 1 });
  });

  it('counts versions and clears', () => {
    const store = new MetricsStore();
    const v0 = store.version;
    store.push([metric({ step: 1, loss: 1 })]);
    const loss = store.metric('loss')!;
    expect(store.version).toBe(v0 + 1);
    const lv = loss.version;
    store.push([metric({ step: 2, loss: 1 })]);
    expect(loss.version).toBe(lv + 1);
    store.clear();
    expect(store.metrics).toEqual([]);
    expect(store.lineCount).toBe(0);
  });
});

describe('downsample', () => {
  const points = (n: number, f: (i: number) => number): IPoint[] =>
    Array.from({ length: n }, (_, i) => ({ step: i, value: f(i) }));

  it('leaves short series alone', () => {
    const p = points(10, i => i);
    expect(downsample(p, 10)).toBe(p);
  });

  it('keeps the ends and every bucket’s extremes, in step order', () => {
    const p = points(5000, i => Math.sin(i / 50) + (i === 2501 ? 10 : 0));
    const out = downsample(p, 100);
    expect(out.length).toBeLessThanOrEqual(202);
    expect(out[0]).toBe(p[0]);
    expect(out[out.length - 1]).toBe(p[4999]);
    expect(out).toContain(p[2501]);
    for (let i = 1; i < out.length; i++) {
      expect(out[i].step).toBeGreaterThan(out[i - 1].step);
    }
    const values = p.map(q => q.value);
    const kept = out.map(q => q.value);
    expect(Math.min(...kept)).toBe(Math.min(...values));
    expect(Math.max(...kept)).toBe(Math.max(...values));
  });

  it('copes with all points at one step', () => {
    const p = Array.from({ length: 100 }, (_, i) => ({ step: 4, value: i }));
    expect(downsample(p, 5).length).toBeLessThanOrEqual(12);
  });
});

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

describe('formatting', () => {
  it('formats values briefly', () => {
    expect(formatValue(0.312345)).toBe('0.3123');
    expect(formatValue(2)).toBe('2');
    expect(formatValue(1234.5678)).toBe('1235');
    expect(formatValue(0)).toBe('0');
    expect(formatValue(0.00012)).toBe('1.2e-4');
    expect(formatValue(3e7)).toBe('3e+7');
    expect(formatValue(NaN)).toBe('NaN');
    expect(formatValue(-Infinity)).toBe('-inf');
  });

  it('picks round ticks', () => {
    expect(niceTicks(0.4, 1.2, 3)).toEqual([0, 0.5, 1, 1.5]);
    expect(niceTicks(0.4, 1.2, 4)).toEqual([0.4, 0.6, 0.8, 1, 1.2]);
    expect(niceTicks(0, 10, 2)).toEqual([0, 5, 10]);
    expect(niceTicks(1, 2, 4, true)).toEqual([1, 2]);
    expect(niceTicks(3, 3, 3)).toEqual([3]);
  });
});

describe('LogBuffer and metrics lines', () => {
  function manual(): { buffer: LogBuffer; flush: () => void } {
    const frames: (() => void)[] = [];
    const buffer = new LogBuffer({ schedule: f => frames.push(f) });
    return { buffer, flush: () => frames.splice(0).forEach(f => f()) };
  }

  it('hides the metrics lines by default, and shows them on request', () => {
    const { buffer, flush } = manual();
    buffer.push([line('a'), metric({ step: 1, loss: 1 }), line('b')]);
    flush();
    expect(buffer.total).toBe(3);
    expect(buffer.metricLines).toBe(1);
    expect(buffer.size).toBe(2);
    expect([buffer.line(0).text, buffer.line(1).text]).toEqual(['a', 'b']);
    buffer.push([metric({ step: 2, loss: 1 }), line('c')]);
    flush();
    expect(buffer.size).toBe(3);
    buffer.setFilter({ metrics: true });
    expect(buffer.size).toBe(5);
    expect(buffer.text()).toContain('KALE_METRIC');
    buffer.setFilter({ metrics: false, query: 'c' });
    expect(buffer.size).toBe(1);
  });

  it('keeps no index while no metrics line came', () => {
    const { buffer, flush } = manual();
    buffer.push([line('a'), line('b')]);
    flush();
    expect(buffer.size).toBe(2);
    buffer.clear();
    expect(buffer.metricLines).toBe(0);
  });

  it('forgets the metrics lines dropped with the oldest lines', () => {
    const frames: (() => void)[] = [];
    const buffer = new LogBuffer({
      schedule: f => frames.push(f),
      maxLines: 2
    });
    buffer.push([metric({ loss: 1 }), line('a'), line('b')]);
    frames.shift()!();
    expect(buffer.metricLines).toBe(0);
    expect(buffer.size).toBe(2);
  });
});
