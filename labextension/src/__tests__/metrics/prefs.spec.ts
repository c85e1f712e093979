import { loadChartPrefs, saveChartPrefs } from '../../metrics/prefs';

describe('the chart preferences', () => {
  beforeEach(() => localStorage.clear());

  it('are remembered', () => {
    expect(loadChartPrefs()).toEqual({ tall: false, log: [] });
    saveChartPrefs({ tall: true, log: ['loss'] });
    expect(loadChartPrefs()).toEqual({ tall: true, log: ['loss'] });
  });

  it('fall back to the defaults when unreadable', () => {
    localStorage.setItem('kale-ext:metric-charts', '{not json');
    expect(loadChartPrefs()).toEqual({ tall: false, log: [] });
    localStorage.setItem(
      'kale-ext:metric-charts',
      '{"tall": 1, "log": [2, "acc"]}'
    );
    expect(loadChartPrefs()).toEqual({ tall: false, log: ['acc'] });
    expect(loadChartPrefs(null)).toEqual({ tall: false, log: [] });
  });
});
