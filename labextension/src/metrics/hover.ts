import { IChartLayout, stepAt, toX, toY } from './chart';
import type { IPoint } from './downsample';
import { formatValue } from './format';
import type { IMetric } from './store';
import { meanSeries } from './summary';

/**
 * A value under the crosshair: a rank's (or the mean's, `rank` null) at or
 * nearest to the hovered step.
 */
export interface IHoverValue {
  rank: number | null;
  step: number;
  value: number;
  /** Where its dot is drawn, in user units. */
  x: number;
  y: number;
}

/**
 * What the crosshair shows: a reported step and each line's value there.
 */
export interface IHover {
  step: number;
  /** The crosshair's position, in user units. */
  x: number;
  values: IHoverValue[];
}

/**
 * The steps any rank reported, sorted: where the crosshair can stop.
 */
export function hoverSteps(metric: IMetric): number[] {
  const steps = new Set<number>();
  for (const s of metric.series.values()) {
    for (const p of s.points) {
      steps.add(p.step);
    }
  }
  return [...steps].sort((a, b) => a - b);
}

/**
 * The reported step nearest to a horizontal position, or null.
 */
export function stepNear(
  steps: number[],
  layout: IChartLayout,
  px: number
): number | null {
  const i = nearest(steps, stepAt(layout, px));
  return i < 0 ? null : steps[i];
}

/**
 * The values of a step: each rank's point nearest to it (its own step
 * shown when it differs) and the mean's at it.
 */
export function hoverAt(
  metric: IMetric,
  layout: IChartLayout,
  step: number
): IHover {
  const values: IHoverValue[] = [];
  const add = (rank: number | null, points: IPoint[], exact: boolean) => {
    const i = nearest(
      points.map(p => p.step),
      step
    );
    const p = points[i];
    if (p && (!exact || p.step === step)) {
      values.push({
        rank,
        ...p,
        x: round(toX(layout, p.step)),
        y: round(toY(layout, p.value))
      });
    }
  };
  for (const s of metric.series.values()) {
    add(s.rank, s.points, false);
  }
  if (layout.mean) {
    add(null, meanSeries(metric), true);
  }
  return { step, x: round(toX(layout, step)), values };
}

/**
 * A hover in words: "step 5: rank 0 0.31, rank 1 0.33 (step 4), mean 0.32".
 */
export function describeHover(
  hover: IHover,
  name: (rank: number | null) => string = rank =>
    rank === null ? 'mean' : `rank ${rank}`
): string {
  const parts = hover.values.map(v => {
    const who = name(v.rank);
    const at = v.step === hover.step ? '' : ` (step ${formatValue(v.step)})`;
    return `${who} ${formatValue(v.value)}${at}`;
  });
  return `step ${formatValue(hover.step)}: ${parts.join(', ')}`;
}

/**
 * The index of the sorted value nearest to `x` (-1 for none).
 */
function nearest(sorted: number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < x) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (
    lo > 0 &&
    (lo === sorted.length || x - sorted[lo - 1] <= sorted[lo] - x)
  ) {
    return lo - 1;
  }
  return lo < sorted.length ? lo : -1;
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}
