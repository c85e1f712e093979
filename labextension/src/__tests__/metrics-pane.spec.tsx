import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { MetricsPane } from '../logs/metrics';
import { CHART_SIZE } from '../metrics/constants';
import { loadChartPrefs } from '../metrics/prefs';
import { MetricsStore } from '../metrics/store';
import { metric, twoRanks } from './metrics/lines';
import { inAct, render } from './render';

function store(): MetricsStore {
  const s = twoRanks();
  s.push([metric({ step: 3, rank: 0, accuracy: 0.97 })]);
  return s;
}

describe('MetricsPane', () => {
  let widget: Widget | null = null;
  beforeEach(() => localStorage.clear());
  afterEach(() => {
    widget?.dispose();
    widget = null;
  });

  async function show(s = store()): Promise<HTMLElement> {
    widget = await render(<MetricsPane store={s} version={s.version} />);
    return widget.node;
  }

  function button(node: HTMLElement, name: string): HTMLButtonElement {
    return [...node.querySelectorAll('button')].find(
      b => (b.getAttribute('aria-label') ?? b.textContent) === name
    )!;
  }

  it('shows a value reported once as a number at its step', async () => {
    const node = await show();
    const accuracy = node.querySelector('[data-metric="accuracy"]')!;
    expect(accuracy.querySelector('svg')).toBeNull();
    expect(
      accuracy.querySelector('.kale-ext-MetricValue-main')!.textContent
    ).toBe('0.97 at step 3');
  });

  it('has last and best in the legend, for each rank and the mean', async () => {
    const node = await show();
    const legend = node.querySelectorAll(
      '[data-metric="loss"] .kale-ext-Metric-legend li'
    );
    expect([...legend].map(li => li.textContent)).toEqual([
      'rank 0last 0.3 step 3best 0.3 step 3',
      'rank 1last 0.5 step 3best 0.5 step 3',
      'meanlast 0.4 step 3best 0.4 step 3'
    ]);
  });

  it('shows the values under the pointer and with the arrow keys', async () => {
    const node = await show();
    const svg = node.querySelector<SVGSVGElement>('[data-metric="loss"] svg')!;
    const tip = node.querySelector<HTMLElement>('.kale-ext-Metric-tooltip')!;
    expect(tip.hidden).toBe(true);
    // the pointer at step 1 (the plot's left edge)
    await inAct(() => {
      svg.dispatchEvent(
        new MouseEvent('pointermove', {
          bubbles: true,
          clientX: CHART_SIZE.left
        })
      );
    });
    expect(tip.hidden).toBe(false);
    expect(svg.getAttribute('aria-describedby')).toBe(tip.id);
    expect(tip.querySelector('.kale-ext-VisuallyHidden')!.textContent).toBe(
      'step 1: rank 0 1.2, rank 1 1, mean 1.1'
    );
    expect(
      node.querySelectorAll('.kale-ext-Metric-crosshair circle')
    ).toHaveLength(3);
    await inAct(() => {
      svg.dispatchEvent(new MouseEvent('pointerout', { bubbles: true }));
    });
    expect(tip.hidden).toBe(true);
    // focus: the last step; arrows move, Escape hides
    await inAct(() => svg.focus());
    expect(tip.textContent).toContain(
      'step 3: rank 0 0.3, rank 1 0.5, mean 0.4'
    );
    await inAct(() => {
      svg.dispatchEvent(
        new KeyboardEvent('keydown', { key: 'ArrowLeft', bubbles: true })
      );
    });
    expect(tip.textContent).toContain(
      'step 2: rank 0 0.4, rank 1 0.6, mean 0.5'
    );
    await inAct(() => {
      svg.dispatchEvent(
        new KeyboardEvent('keydown', { key: 'Home', bubbles: true })
      );
    });
    expect(tip.textContent).toContain('step 1:');
    await inAct(() => {
      svg.dispatchEvent(
        new KeyboardEvent('keydown', { key: 'Escape', bubbles: true })
      );
    });
    expect(tip.hidden).toBe(true);
  });

  it('toggles a log scale per metric, remembered', async () => {
    const node = await show();
    const log = button(node, 'Log scale of loss');
    expect(log.getAttribute('aria-pressed')).toBe('false');
    const figure = node.querySelector('[data-metric="loss"]')!;
    expect(figure.getAttribute('data-scale')).toBe('linear');
    await inAct(() => log.click());
    expect(log.getAttribute('aria-pressed')).toBe('true');
    expect(figure.getAttribute('data-scale')).toBe('log');
    expect(loadChartPrefs().log).toEqual(['loss']);
  });

  it('says why a log scale cannot be drawn', async () => {
    const s = new MetricsStore();
    s.push([
      metric({ step: 1, rank: 0, delta: 0.5 }),
      metric({ step: 2, rank: 0, delta: -0.25 })
    ]);
    const node = await show(s);
    await inAct(() => button(node, 'Log scale of delta').click());
    expect(
      node.querySelector('[data-metric="delta"]')!.getAttribute('data-scale')
    ).toBe('linear');
    expect(node.querySelector('.kale-ext-Metric-note')!.textContent).toBe(
      'Log scale needs values above 0: delta has -0.25. Drawn linear.'
    );
  });

  it('makes the charts taller, remembered', async () => {
    const node = await show();
    const svg = () => node.querySelector('[data-metric="loss"] svg')!;
    expect(svg().getAttribute('height')).toBe(String(CHART_SIZE.height));
    await inAct(() => button(node, 'Taller charts').click());
    expect(svg().getAttribute('height')).toBe(String(2 * CHART_SIZE.height));
    expect(loadChartPrefs().tall).toBe(true);
    widget!.dispose();
    const again = await show();
    expect(
      again.querySelector('[data-metric="loss"] svg')!.getAttribute('height')
    ).toBe(String(2 * CHART_SIZE.height));
  });
});
