import contract from '../../contract.json';
import {
  CHART_SIZE,
  INF_TEXT,
  INTERNAL_KEYS,
  installSeriesColors,
  MAX_POINTS,
  METRIC_PREFIX,
  NAN_TEXT,
  SERIES_COLORS
} from '../../metrics/constants';

describe('the metrics constants come from the contract', () => {
  it('are the values the Python side chose', () => {
    expect(METRIC_PREFIX).toBe('KALE_METRIC ');
    expect(MAX_POINTS).toBe(2000);
    expect(NAN_TEXT).toBe('nan');
    expect(INF_TEXT).toBe('inf');
    expect(SERIES_COLORS).toEqual(contract.metrics.series_colors);
    expect(CHART_SIZE).toEqual(contract.metrics.chart_size);
    expect(INTERNAL_KEYS).toEqual([
      'total',
      'epoch',
      'epochs',
      'checkpoint_step'
    ]);
  });

  it('give each rank class its colour, once', () => {
    installSeriesColors();
    installSeriesColors();
    const styles = document.querySelectorAll('#kale-ext-series-colors');
    expect(styles).toHaveLength(1);
    const css = styles[0].textContent ?? '';
    SERIES_COLORS.forEach((color, i) => {
      expect(css).toContain(
        `.kale-ext-who-${i} { --kale-ext-who-color: ${color}; }`
      );
    });
  });
});
