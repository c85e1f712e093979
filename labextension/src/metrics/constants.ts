/**
 * The facts the metrics code shares with `kale_ext/metrics.py`: what starts
 * a metrics line, how many points a series keeps, the series colours, how a
 * value that is not a finite number reads, a chart's size, which metrics
 * are better lower, and which keys are kale_ext's own, not metrics. They come
 * from the generated contract (`../contract.json`), never a copy.
 */
import { METRICS, type IChartSize } from '../contract';

export type { IChartSize };

/**
 * What starts a metrics line (`kale_ext/metrics.py`: PREFIX).
 */
export const METRIC_PREFIX: string = METRICS.prefix;

/**
 * Points kept per metric and rank; beyond it a series is thinned to a
 * quarter, its minima and maxima kept.
 */
export const MAX_POINTS: number = METRICS.max_points;

/**
 * The series colours, by rank modulo their number; a rank's log lines share
 * its colour (the classes `kale-ext-who-<i>`, see {@link seriesColorsCss}).
 */
export const SERIES_COLORS: readonly string[] = METRICS.series_colors;

/**
 * How a value that is not a finite number reads.
 */
export const NAN_TEXT: string = METRICS.nan_text;
export const INF_TEXT: string = METRICS.inf_text;

/**
 * A chart's default size and margins, in SVG user units.
 */
export const CHART_SIZE: Readonly<IChartSize> = METRICS.chart_size;

/**
 * Words that make a metric one whose best value is its lowest (`loss`,
 * `error`, `mse`, ...); any other metric's best is its highest.
 */
export const LOWER_IS_BETTER: readonly string[] = METRICS.lower_is_better;

/**
 * The keys of a metrics line that are kale_ext's own, not metrics to plot
 * (`kale_ext/metrics.py`: INTERNAL_KEYS): the job's progress
 * (`report(step=, total=)`, `report(epoch=, epochs=)`) and the step each
 * checkpoint save reports (`checkpoint_step`, shown as the job's last
 * checkpoint in its row).
 */
export const INTERNAL_KEYS: readonly string[] = METRICS.internal_keys;

/**
 * The CSS that gives each `kale-ext-who-<i>` class its series colour.
 */
export function seriesColorsCss(): string {
  return SERIES_COLORS.map(
    (color, i) => `.kale-ext-who-${i} { --kale-ext-who-color: ${color}; }`
  ).join('\n');
}

/**
 * Add the series colours to the page once (the log lines, the charts and
 * the legends use them).
 */
export function installSeriesColors(doc: Document = document): void {
  const id = 'kale-ext-series-colors';
  if (doc.getElementById(id)) {
    return;
  }
  const style = doc.createElement('style');
  style.id = id;
  style.textContent = seriesColorsCss();
  doc.head.appendChild(style);
}
