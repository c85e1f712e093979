import { INTERNAL_KEYS, METRIC_PREFIX } from './constants';

/**
 * Reading the lines `kale_ext.report()` prints
 * (`KALE_METRIC {"step": 1, "rank": 0, "loss": 0.31}`).
 */

/**
 * Whether a log line was printed by `report()` (the logs view hides these by
 * default). Cheap: a prefix test, no parsing.
 */
export function isMetricLine(text: string): boolean {
  return text.startsWith(METRIC_PREFIX);
}

/**
 * One `report()` call.
 */
export interface IMetricRecord {
  /** The step it reported, or null when it gave none. */
  step: number | null;
  /** The rank it reported, or null when it gave none. */
  rank: number | null;
  /** The metrics by name; non-finite values (NaN, inf) are kept as such. */
  values: Map<string, number>;
}

/**
 * The record of a metrics line, or null for any other line (not one,
 * malformed JSON, not an object). Values that are not numbers are left out,
 * and so are kale_ext's own keys (`INTERNAL_KEYS`: `total`, `epoch`,
 * `epochs`, how far the job is, and `checkpoint_step`, the step a checkpoint
 * saved: not metrics to plot); `NaN` and `Infinity`, which Python's
 * `json.dumps` writes, are read.
 */
export function parseMetric(text: string): IMetricRecord | null {
  if (!isMetricLine(text)) {
    return null;
  }
  const data = Private.json(text.slice(METRIC_PREFIX.length).trim());
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return null;
  }
  const record = data as Record<string, unknown>;
  const values = new Map<string, number>();
  for (const [name, value] of Object.entries(record)) {
    if (Private.NOT_METRICS.has(name)) {
      continue;
    }
    const number = Private.number(value);
    if (number !== null) {
      values.set(name, number);
    }
  }
  const step = Private.number(record.step);
  const rank = record.rank;
  return {
    step: step !== null && Number.isFinite(step) ? step : null,
    rank:
      typeof rank === 'number' && Number.isInteger(rank) && rank >= 0
        ? rank
        : null,
    values
  };
}

namespace Private {
  /**
   * The keys of a record that are not metrics: its step, its rank and
   * kale_ext's own (its progress, its checkpoint's step).
   */
  export const NOT_METRICS: ReadonlySet<string> = new Set([
    'step',
    'rank',
    ...INTERNAL_KEYS
  ]);

  /**
   * The JSON value, Python's non-standard `NaN` and `Infinity` included, or
   * undefined when it is not JSON.
   */
  export function json(text: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      if (!/NaN|Infinity/.test(text)) {
        return undefined;
      }
    }
    try {
      // Python's non-standard constants, quoted where they stand as values.
      return JSON.parse(
        text.replace(
          /([:,[]\s*)(-?Infinity|NaN)(?=\s*[,}\]])/g,
          (_, before: string, word: string) => `${before}"${word}"`
        )
      );
    } catch {
      return undefined;
    }
  }

  export function number(value: unknown): number | null {
    if (typeof value === 'number') {
      return value;
    }
    if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') {
      return Number(value);
    }
    return null;
  }
}
