import type { Page } from '@playwright/test';

import { expect, IJupyterLabPageFixture, screenshot, test } from './fixtures';
import { manyJobs, serveJobs } from './synthetic';

/**
 * Text keeps its contrast (WCAG AA: 4.5:1) in the light and the dark theme
 * where the panel colours it: the status pills (Stopped among them), the
 * jobs list's text (names, notebooks, times, filters, reasons), Compare's
 * rows that differ and a sweep's best trial. The server's answers
 * are synthetic (no job runs): what is tested is how they are drawn.
 *
 * The ratio is WCAG's, from the colours the browser computed: the text's
 * over its background, each layer of background that is not opaque
 * composited over the one behind it. (axe-core's color-contrast rule finds
 * no element it applies to in JupyterLab's layout: all inapplicable.)
 */

test.use({ viewport: { width: 1400, height: 900 } });

const NOW = Date.now();

/** Two ended jobs whose parameter `lr` differs, and one of each status. */
function jobs(): Record<string, unknown>[] {
  const base = manyJobs(1)[0];
  const job = (name: string, extra: Record<string, unknown>) => ({
    ...base,
    name,
    created: new Date(NOW - 60_000).toISOString(),
    ...extra
  });
  const ended = { finished: new Date(NOW).toISOString() };
  return [
    job('c-slow', { status: 'Complete', ...ended }),
    job('c-fast', {
      status: 'Complete',
      ...ended,
      provenance: { 'kale-ext.io/options': '{"parameters": {"lr": 0.5}}' }
    }),
    job('c-failed', { status: 'Failed', reason: 'node 1 exited', ...ended }),
    job('c-stopped', {
      status: 'Failed',
      status_text: 'Stopped',
      reason: 'stopped by someone at 2026-12-06T08:00:00Z',
      ...ended
    }),
    job('c-running', {
      status: 'Running',
      provenance: { 'kale-ext.io/notebook': 'work/mnist.ipynb' }
    }),
    job('c-queued', { status: 'Queued' })
  ];
}

/** A sweep of two completed trials, the second the best, and a Stopped one. */
const SWEEP_ANSWER = {
  name: 'c-sweep',
  status: 'Complete',
  search: 'grid',
  parallel: 2,
  metric: 'loss',
  goal: 'min',
  space: [],
  best: 'c-sweep-1',
  max_trials: 3,
  tally: '2 of 3 complete; 1 stopped',
  trials: [
    {
      number: 0,
      job: 'c-sweep-0',
      parameters: { lr: 0.1 },
      status: 'Complete',
      metric: 0.7,
      step: 4,
      best: false
    },
    {
      number: 1,
      job: 'c-sweep-1',
      parameters: { lr: 0.5 },
      status: 'Complete',
      metric: 0.3,
      step: 4,
      best: true
    },
    {
      number: 2,
      job: 'c-sweep-2',
      parameters: { lr: 0.9 },
      status: 'Stopped',
      metric: 0.9,
      step: 1,
      reason: 'stopped by someone at 2026-12-06T08:00:00Z',
      best: false
    }
  ]
};

/** The two jobs' differences, as `GET kale-ext/diff` says them. */
const DIFF = {
  jobs: [
    { name: 'c-slow', status: 'Complete' },
    { name: 'c-fast', status: 'Complete' }
  ],
  differences: [{ field: 'parameters.lr', values: [null, '0.5'] }],
  source_diffs: []
};

async function serve(page: Page): Promise<void> {
  await serveJobs(page, jobs());
  await page.route(/\/kale-ext\/sweeps\/c-sweep(\?.*)?$/, route =>
    route.fulfill({ json: SWEEP_ANSWER })
  );
  await page.route(/\/kale-ext\/diff(\?.*)?$/, route =>
    route.fulfill({ json: DIFF })
  );
}

/** WCAG AA's least contrast for text of a normal size. */
const AA = 4.5;

/**
 * The elements matching `selector` that hold text and whose text has less
 * than `AA` contrast with what is behind it: `text: ratio (colour on
 * background)`, one each.
 */
async function lowContrast(
  page: IJupyterLabPageFixture,
  selector: string
): Promise<string[]> {
  return page.locator(selector).evaluateAll((nodes, least) => {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 1;
    const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
    // any CSS colour the browser computed (rgb(), color(srgb ...)),
    // painted over what is already there: the pixel that shows
    const paint = (color: string): number[] => {
      ctx.fillStyle = color;
      ctx.fillRect(0, 0, 1, 1);
      return [...ctx.getImageData(0, 0, 1, 1).data.slice(0, 3)];
    };
    const luminance = (rgb: number[]) => {
      const [r, g, b] = rgb.map(v => {
        const c = v / 255;
        return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const out: string[] = [];
    for (const node of nodes) {
      const own = [...node.childNodes]
        .filter(c => c.nodeType === Node.TEXT_NODE)
        .map(c => c.textContent ?? '')
        .join('')
        .trim();
      if (!own || (node as HTMLElement).offsetParent === null) {
        continue;
      }
      const layers: string[] = [];
      for (let el: Element | null = node; el; el = el.parentElement) {
        const bg = getComputedStyle(el).backgroundColor;
        layers.unshift(bg);
        if (/^rgb\(/.test(bg) || (/^color\(/.test(bg) && !bg.includes('/'))) {
          break; // opaque: nothing behind it shows
        }
      }
      ctx.clearRect(0, 0, 1, 1);
      paint('#fff');
      let back = [255, 255, 255];
      for (const layer of layers) {
        back = paint(layer);
      }
      const text = paint(getComputedStyle(node).color);
      const [hi, lo] = [luminance(text), luminance(back)].sort((a, b) => b - a);
      const ratio = (hi + 0.05) / (lo + 0.05);
      if (ratio < least) {
        out.push(
          `${own}: ${ratio.toFixed(2)} (${text.join(',')} on ${back.join(',')})`
        );
      }
    }
    return out;
  }, AA);
}

/** What the test checks: every element of these, with text (a disabled
 * control is not held to it, as WCAG says). */
const PANEL =
  '#kale-ext-panel .kale-ext-Status, #kale-ext-panel .kale-ext-Pill';
const LIST = [
  '.kale-ext-JobRow *:not(:disabled, [aria-disabled="true"])',
  '.kale-ext-JobsToolbar *:not(:disabled, [aria-disabled="true"])',
  '.kale-ext-JobsShown',
  '.kale-ext-JobsShown *'
]
  .map(s => `#kale-ext-panel ${s}`)
  .join(', ');
const SWEEP =
  '.kale-ext-SweepView .kale-ext-Status, .kale-ext-TrialTable tr.kale-ext-mod-best, .kale-ext-TrialTable tr.kale-ext-mod-best *';
const COMPARE =
  '.kale-ext-CompareTable tr.kale-ext-mod-differs, .kale-ext-CompareTable tr.kale-ext-mod-differs *';

test('status pills, the jobs list, the rows that differ and the best trial keep AA contrast in the light and the dark theme', async ({
  page,
  kale
}, testInfo) => {
  await serve(page);
  await kale.openPanel(); // no notebook open: every job listed
  for (const name of ['c-stopped', 'c-running', 'c-queued', 'c-failed']) {
    await expect(kale.row(name)).toBeVisible();
  }
  await expect(
    kale.row('c-stopped').locator('.kale-ext-Status-stopped')
  ).toHaveText('Stopped');
  await expect(kale.row('c-running').locator('time')).toHaveText(
    /^\d+ min ago$/
  );
  // a filter, to show what it says
  await page.getByLabel('Filter by name').fill('c-');
  await expect(page.locator('.kale-ext-JobsShown')).toBeVisible();

  await page.evaluate(async () => {
    await window.jupyterapp.commands.execute('kale-ext:compare', {
      names: ['c-slow', 'c-fast']
    });
  });
  const compare = page.locator('.kale-ext-CompareView');
  await expect(compare.locator('tr.kale-ext-mod-differs')).not.toHaveCount(0);

  await page.evaluate(async () => {
    await window.jupyterapp.commands.execute('kale-ext:open-sweep', {
      name: 'c-sweep'
    });
  });
  const sweep = page.locator('.kale-ext-SweepView[data-sweep="c-sweep"]');
  await expect(sweep.locator('tr.kale-ext-mod-best')).toHaveCount(1);
  await expect(sweep.locator('tr[data-status="Stopped"]')).toHaveCount(1);

  for (const theme of ['light', 'dark'] as const) {
    if (theme === 'dark') {
      await page.theme.setDarkTheme();
    }
    expect.soft(await lowContrast(page, PANEL), theme).toEqual([]);
    expect.soft(await lowContrast(page, LIST), theme).toEqual([]);
    expect.soft(await lowContrast(page, SWEEP), theme).toEqual([]);
    await screenshot(page, testInfo, `contrast-sweep-${theme}.png`, false);
    await page
      .locator('.lm-TabBar-tab', { hasText: 'Compare' })
      .first()
      .click();
    await expect(compare).toBeVisible();
    expect.soft(await lowContrast(page, COMPARE), theme).toEqual([]);
    await screenshot(page, testInfo, `contrast-compare-${theme}.png`, false);
    await page
      .locator('.lm-TabBar-tab', { hasText: 'c-sweep' })
      .first()
      .click();
  }
  await page.theme.setLightTheme();
});

test("a field's error keeps AA contrast in the light and the dark theme", async ({
  page,
  kale
}) => {
  const panel = await kale.parameters('contrast.ipynb', 'lr = 0.1');
  await kale.fill({ 'CPU request per node': 'lots' }); // not a quantity
  const error = '#kale-ext-panel .kale-ext-Field-error';
  await expect(panel.locator('.kale-ext-Field-error').first()).toBeVisible();
  for (const theme of ['light', 'dark'] as const) {
    if (theme === 'dark') {
      await page.theme.setDarkTheme();
    }
    expect.soft(await lowContrast(page, error), theme).toEqual([]);
  }
  await page.theme.setLightTheme();
});
