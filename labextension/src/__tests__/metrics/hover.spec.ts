import { chartLayout, toX } from '../../metrics/chart';
import {
  describeHover,
  hoverAt,
  hoverSteps,
  stepNear
} from '../../metrics/hover';
import { twoRanks } from './lines';

describe('the crosshair', () => {
  const s = twoRanks([3, 2]); // rank 1 has not reported step 3 yet
  const loss = s.metric('loss')!;
  const layout = chartLayout(loss);

  it('stops at the reported step nearest to the pointer', () => {
    const steps = hoverSteps(loss);
    expect(steps).toEqual([1, 2, 3]);
    expect(stepNear(steps, layout, toX(layout, 1.4))).toBe(1);
    expect(stepNear(steps, layout, toX(layout, 1.6))).toBe(2);
    expect(stepNear(steps, layout, 0)).toBe(1);
    expect(stepNear(steps, layout, 10_000)).toBe(3);
    expect(stepNear([], layout, 100)).toBeNull();
  });

  it("shows each rank's value and the mean at the step", () => {
    const hover = hoverAt(loss, layout, 2);
    expect(hover.x).toBeCloseTo(toX(layout, 2), 1);
    expect(hover.values.map(v => [v.rank, v.value])).toEqual([
      [0, 0.4],
      [1, 0.6],
      [null, 0.5]
    ]);
    for (const v of hover.values) {
      expect(v.y).toBeGreaterThanOrEqual(layout.size.top);
      expect(v.y).toBeLessThanOrEqual(layout.size.height - layout.size.bottom);
    }
    expect(describeHover(hover)).toBe(
      'step 2: rank 0 0.4, rank 1 0.6, mean 0.5'
    );
  });

  it("names a rank's own step where it has none at the hovered one", () => {
    expect(describeHover(hoverAt(loss, layout, 3))).toBe(
      'step 3: rank 0 0.3, rank 1 0.6 (step 2)'
    );
  });
});
