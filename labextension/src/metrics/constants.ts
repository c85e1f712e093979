/**
 * The facts the metrics code shares with `kale_ext/metrics.py`: what starts
 * a metrics line, how many points a series keeps, the series colours, how a
 * value that is not a finite number reads, and a chart's size. All of them
 * here, and nothing else, so they can come from the Python side as data.
 */

/**
 * What starts a metrics line (`kale_ext/metrics.py`: PREFIX).
 */
export const METRIC_PREFIX = 'KALE_METRIC ';

/**
 * Points kept per metric and rank; beyond it a series is thinned to a
 * quarter, its minima and maxima kept.
 */
export const MAX_POINTS = 20_000;

/**
 * The series colours, by rank modulo their number; a rank's log lines share
 * its colour. (`labextension/style/base.css` sets them as the classes
 * `kale-ext-who-0` … `kale-ext-who-7`.)
 */
export const SERIES_COLORS: readonly string[] = [
  'var(--jp-brand-color1)',
  'var(--jp-warn-color1)',
  'var(--jp-success-color1)',
  'var(--jp-info-color1)',
  'var(--jp-accent-color0)',
  'var(--jp-error-color1)',
  'var(--jp-brand-color0)',
  'var(--jp-warn-color0)'
];

/**
 * How a value that is not a finite number reads.
 */
export const NAN_TEXT = 'NaN';
export const INF_TEXT = 'inf';

/**
 * A chart's size and margins, in SVG user units.
 */
export interface IChartSize {
  width: number;
  height: number;
  /** Room for the y labels on the left, x labels below. */
  left: number;
  bottom: number;
  top: number;
  right: number;
}

export const CHART_SIZE: IChartSize = {
  width: 280,
  height: 120,
  left: 44,
  bottom: 18,
  top: 6,
  right: 8
};
