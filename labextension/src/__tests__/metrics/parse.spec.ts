import { isMetricLine, parseMetric } from '../../metrics/parse';

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

  it.each([
    [
      'report(step=, total=)',
      '{"step": 3, "rank": 0, "total": 9, "loss": 0.25}',
      [['loss', 0.25]]
    ],
    [
      'report(epoch=, epochs=)',
      '{"epoch": 2, "epochs": 5, "rank": 0, "accuracy": 0.9}',
      [['accuracy', 0.9]]
    ],
    ['progress alone', '{"step": 1, "total": 4.0}', []],
    // checkpoint.save(): the step it saved shows as the job's last checkpoint
    ['a checkpoint saved', '{"step": 4, "rank": 0, "checkpoint_step": 4}', []],
    [
      'a checkpoint saved with a metric',
      '{"step": 4, "loss": 0.5, "checkpoint_step": 4}',
      [['loss', 0.5]]
    ]
  ])("leaves kale_ext's own keys out of the metrics: %s", (_, json, values) => {
    const r = parseMetric(`KALE_METRIC ${json}`)!;
    expect([...r.values]).toEqual(values);
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
