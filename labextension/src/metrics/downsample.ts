/**
 * A point of a series.
 */
export interface IPoint {
  step: number;
  value: number;
}

/**
 * At most about `2 * buckets` points that look like `points` when drawn: the
 * steps are cut into `buckets` equal ranges and each keeps its lowest and
 * highest value (in step order), so spikes survive; the first and last
 * points are always kept. `points` must be sorted by step.
 */
export function downsample(points: IPoint[], buckets: number): IPoint[] {
  const n = points.length;
  buckets = Math.max(1, Math.floor(buckets));
  if (n <= 2 * buckets + 2) {
    return points;
  }
  const first = points[0].step;
  const span = points[n - 1].step - first;
  const bucketOf =
    span > 0
      ? (i: number) =>
          Math.min(
            buckets - 1,
            Math.floor(((points[i].step - first) / span) * buckets)
          )
      : (i: number) => Math.floor((i * buckets) / n);
  const out: IPoint[] = [points[0]];
  let i = 1;
  while (i < n - 1) {
    const bucket = bucketOf(i);
    let lo = i;
    let hi = i;
    let j = i;
    for (; j < n - 1 && bucketOf(j) === bucket; j++) {
      if (points[j].value < points[lo].value) {
        lo = j;
      }
      if (points[j].value > points[hi].value) {
        hi = j;
      }
    }
    if (lo === hi) {
      out.push(points[lo]);
    } else {
      out.push(points[Math.min(lo, hi)], points[Math.max(lo, hi)]);
    }
    i = j;
  }
  out.push(points[n - 1]);
  return out;
}
