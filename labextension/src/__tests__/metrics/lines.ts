/**
 * Log lines for the metrics specs (this file holds no tests).
 */
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
