import { downsample, IPoint } from '../../metrics/downsample';

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
