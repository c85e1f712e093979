/**
 * Log lines for the metrics specs (this file holds no tests).
 */
import { MetricsStore } from '../../metrics/store';
import type { Kale } from '../../types';

export function line(
  text: string,
  node = 0,
  rank: number | null = node
): Kale.ILogLine {
  return { node, rank, text, offset: 0 };
}

export function metric(
  record: Record<string, unknown>,
  node = 0
): Kale.ILogLine {
  return line(`KALE_METRIC ${JSON.stringify(record)}`, node);
}

/**
 * A store of two ranks' `loss` from step 1, rank 0 up to step `steps[0]`
 * (1.2, 0.4, 0.3), rank 1 up to `steps[1]` (1.0, 0.6, 0.5).
 */
export function twoRanks(steps = [3, 3]): MetricsStore {
  const s = new MetricsStore();
  const losses = [
    [1.2, 0.4, 0.3],
    [1.0, 0.6, 0.5]
  ];
  losses.forEach((loss, rank) =>
    s.push(
      loss
        .slice(0, steps[rank])
        .map((value, i) => metric({ step: i + 1, rank, loss: value }, rank))
    )
  );
  return s;
}
