import { describeMetric } from '../../metrics/format';
import { MetricsStore } from '../../metrics/store';
import type { Kale } from '../../types';
import { line, metric } from './lines';

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

  it('charts no progress: total, epoch and epochs are not metrics', () => {
    const store = new MetricsStore();
    store.push([
      metric({ step: 1, rank: 0, total: 4, loss: 0.9 }),
      metric({ epoch: 1, epochs: 3, rank: 0, accuracy: 0.5 })
    ]);
    expect(store.metrics.map(m => m.name)).toEqual(['loss', 'accuracy']);
  });

  it("charts no checkpoint: a save's checkpoint_step is not a metric", () => {
    const store = new MetricsStore();
    store.push([
      metric({ step: 1, rank: 0, loss: 0.9 }),
      metric({ step: 1, rank: 0, checkpoint_step: 1 }) // checkpoint.save()
    ]);
    expect(store.metrics.map(m => m.name)).toEqual(['loss']);
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
    expect(describeMetric(loss)).toBe('loss, latest: rank 0 nan at step 2');
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
