import type { Locator } from '@playwright/test';
import * as fs from 'fs';

import { expect, panelScreenshot, test } from './fixtures';
import { serveJobs } from './synthetic';

/**
 * The jobs list at the panel's default width (250 px) with 50 jobs whose
 * names differ only at their end, as the server names a notebook's jobs:
 * each name's distinguishing end stays in view, the order is chosen in one
 * line, the list filters by state and by name, says each job's notebook
 * where all are listed, writes every time as how long ago, and a running
 * job's latest metric moves as the job reports it. The server's answers are
 * synthetic (no job runs): what is tested is how the list draws them.
 */

test.use({ viewport: { width: 1024, height: 900 } });

const NOW = Date.now();
const STATES = ['Running', 'Complete', 'Failed', 'Queued', 'Complete'];
const PREFIX = 'mnist-distributed-training-';

/** The 5 characters the server appends to a notebook's name: unique. */
const suffix = (i: number) => (60466176 + i * 7919).toString(36).slice(-5);

/** 50 jobs of two notebooks, newest first, every 5th one running. */
function fifty(): Record<string, unknown>[] {
  return Array.from({ length: 50 }, (_, i) => ({
    name: `${PREFIX}${suffix(i)}`,
    status: STATES[i % 5],
    reason: null,
    backend: 'local',
    runtime: 'torch-distributed',
    num_nodes: 2,
    procs_per_node: 1,
    nodes: [],
    created: new Date(NOW - (i + 3) * 60_000).toISOString(),
    finished: null,
    provenance: {
      'kale-ext.io/notebook': i % 2 ? 'work/mnist.ipynb' : 'cifar.ipynb'
    }
  }));
}

/** Whether an element's text is cut (it holds more than it shows). */
const cut = (node: Element) => node.scrollWidth > node.clientWidth;

/** An element's box, which must be inside `outer`'s. */
async function inside(inner: Locator, outer: Locator): Promise<boolean> {
  const [a, b] = [await inner.boundingBox(), await outer.boundingBox()];
  return !!a && !!b && a.x >= b.x - 0.5 && a.x + a.width <= b.x + b.width + 0.5;
}

test('50 jobs at 250 px: distinguishing ends in view, a one-line order, filters, notebooks, times, a live metric and outputs to open or download', async ({
  page,
  kale,
  tmpPath
}, testInfo) => {
  const jobs = fifty();
  await serveJobs(page, jobs);
  // an ended job's output file, under the server root where Jupyter serves it
  const ended = jobs[1].name as string;
  const folder = `${tmpPath}/outputs/${ended}`;
  const METRICS = '{"accuracy": 0.97}';
  expect(
    await page.contents.uploadContent(METRICS, 'text', `${folder}/metrics.json`)
  ).toBe(true);
  await page.route(new RegExp(`/kale-ext/jobs/${ended}/outputs`), route =>
    route.fulfill({
      json: {
        location: `/srv/${folder}`,
        files: [{ path: 'metrics.json', size: METRICS.length }],
        note: null,
        listed: true,
        root_path: folder
      }
    })
  );
  // the first running job reports its loss: 0.5, then 0.25
  const live = jobs[0].name as string;
  let loss = 0.5;
  await page.route(new RegExp(`/kale-ext/jobs/${live}/logs`), route => {
    const text = `KALE_METRIC {"step": 3, "rank": 0, "loss": ${loss}}`;
    const line = { node: 0, rank: 0, text, offset: text.length + 1 };
    return route.fulfill({
      status: 200,
      headers: { 'Content-Type': 'text/event-stream; charset=utf-8' },
      body:
        `id: 0:${line.offset}\ndata: ${JSON.stringify(line)}\n\n` +
        'event: end\ndata: {"status": "Running"}\n\n'
    });
  });
  const panel = await kale.openPanel(); // no notebook open: all jobs
  const width = (await panel.boundingBox())!.width;
  expect(width).toBeLessThanOrEqual(260); // the default width

  const rows = panel.locator('.kale-ext-JobRow');
  await expect(rows).toHaveCount(50);

  // Each name: cut in the middle, its distinguishing end whole and in view.
  for (const i of [0, 1, 17, 49]) {
    const name = jobs[i].name as string;
    const row = kale.row(name);
    await row.scrollIntoViewIfNeeded();
    const shown = row.locator('.kale-ext-JobRow-name');
    await expect(shown).toHaveAttribute('title', name);
    const tail = shown.locator('.kale-ext-JobName-tail');
    await expect(tail).toHaveText(`-${suffix(i)}`);
    expect(await tail.evaluate(cut)).toBe(false);
    expect(await inside(tail, row)).toBe(true);
    expect(await shown.locator('.kale-ext-JobName-head').evaluate(cut)).toBe(
      true
    ); // the start gave way, not the end
  }

  // A card says no parameters and no metric in no line: 4 lines per job
  // (state, name, runtime and notebook, actions: one line, tested below).
  await expect(
    kale.row(jobs[1].name as string).locator('.kale-ext-JobCol-parameters')
  ).toBeHidden();
  await expect(
    kale.row(jobs[1].name as string).locator('.kale-ext-JobCol-metric')
  ).toBeHidden();

  // The order in one line; the columns' headers (which wrap) not shown.
  const sort = panel.locator('.kale-ext-JobSort');
  await expect(sort).toBeVisible();
  await expect(panel.locator('.kale-ext-JobTable-head')).toBeHidden();
  const tops = await sort
    .locator('select, button')
    .evaluateAll(nodes => nodes.map(n => n.getBoundingClientRect().top));
  expect(new Set(tops).size).toBe(1);
  const line = await sort.evaluate(node => {
    const style = getComputedStyle(node);
    return [node.getBoundingClientRect().height, parseFloat(style.fontSize)];
  });
  expect(line[0]).toBeLessThan(2 * 26); // one control's height, not two
  await sort.getByLabel('Sort by').selectOption('name');
  await expect(rows.first()).toHaveAttribute(
    'data-job',
    [...jobs.map(j => j.name as string)].sort()[0]
  );
  await sort.getByLabel('Sort by').selectOption('created');
  await expect(rows.first()).toHaveAttribute('data-job', live);

  // Where all jobs are listed, each says its notebook.
  await expect(
    kale.row(jobs[1].name as string).locator('.kale-ext-JobRow-notebook')
  ).toHaveText('mnist.ipynb');
  await expect(
    kale.row(live).locator('.kale-ext-JobRow-notebook')
  ).toHaveAttribute('title', 'cifar.ipynb');

  // Times: how long ago, the time itself on hover.
  const started = kale
    .row(jobs[2].name as string)
    .locator('time')
    .first();
  await expect(started).toHaveText(/^\d+ min ago$/);
  await expect(started).toHaveAttribute(
    'title',
    new RegExp(`^Started .*\\(${(jobs[2].created as string).slice(0, 19)}Z\\)$`)
  );

  // A running job's latest metric, and again as it moves.
  const metric = kale.row(live).locator('.kale-ext-JobCol-metric');
  await expect(metric).toHaveText('0.5 step 3', { timeout: 15_000 });
  loss = 0.25;
  await expect(metric).toHaveText('0.25 step 3', { timeout: 15_000 });

  await panel.getByLabel('Filter by name').fill(PREFIX); // a filter shown
  await expect(panel.locator('.kale-ext-JobsShown')).toBeVisible();
  await panelScreenshot(page, testInfo, 'jobs-list-250-light.png', false);
  await page.theme.setDarkTheme();
  await panelScreenshot(page, testInfo, 'jobs-list-250-dark.png', false);
  await page.theme.setLightTheme();
  await panel.getByLabel('Filter by name').fill('');

  // Filters: by state (as `kale-ext jobs --status`), by name; both cleared.
  const state = panel.getByLabel('Filter by state');
  await state.selectOption('running');
  await expect(rows).toHaveCount(10);
  expect(
    new Set(await rows.evaluateAll(r => r.map(n => n.dataset.status)))
  ).toEqual(new Set(['Running']));
  await expect(panel.locator('.kale-ext-JobsShown')).toHaveText(
    '10 of 50 shown Clear filters'
  );
  await state.selectOption('');
  await panel.getByLabel('Filter by name').fill(suffix(17).toUpperCase());
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toHaveAttribute(
    'data-job',
    jobs[17].name as string
  );
  await state.selectOption('queued');
  await expect(rows).toHaveCount(0); // job 17 failed
  await expect(panel.locator('.kale-ext-JobsShown')).toContainText(
    '0 of 50 shown'
  );
  await panel.getByRole('button', { name: 'Clear filters' }).click();
  await expect(rows).toHaveCount(50);
  await expect(panel.getByLabel('Filter by name')).toHaveValue('');

  // An output file opens in a browser tab, or downloads.
  await kale.row(ended).getByLabel(`Outputs of ${ended}`).click();
  const files = kale.row(ended).getByRole('list', { name: 'Output files' });
  const open = files.getByRole('link', { name: 'Open metrics.json' });
  await expect(open).toHaveAttribute('target', '_blank');
  const [tab] = await Promise.all([page.waitForEvent('popup'), open.click()]);
  await expect(tab.locator('body')).toContainText(METRICS);
  await tab.close();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    files.getByRole('link', { name: 'Download metrics.json' }).click()
  ]);
  expect(download.suggestedFilename()).toBe('metrics.json');
  const saved = testInfo.outputPath('metrics.json');
  await download.saveAs(saved);
  expect(fs.readFileSync(saved, 'utf-8')).toBe(METRICS);

  // Wide: the columns' headers again, in one line; names whole.
  await kale.widen(420);
  await expect(panel.locator('.kale-ext-JobTable-head')).toBeVisible();
  await expect(sort).toBeHidden();
  const heads = await panel
    .locator('.kale-ext-JobTable-head [role="columnheader"]')
    .evaluateAll(nodes => nodes.map(n => n.getBoundingClientRect().top));
  expect(new Set(heads).size).toBe(1);
  await panelScreenshot(page, testInfo, 'jobs-list-wide-light.png', false);
});

test("a row's actions at 250 px: one line of icon buttons, each reachable by its name and by the keyboard", async ({
  page,
  kale
}) => {
  const ended = new Date(NOW - 60_000).toISOString();
  const job = (name: string, status: string, extra = {}) => ({
    ...fifty()[0],
    name,
    status,
    created: new Date(NOW - 120_000).toISOString(),
    ...extra
  });
  await serveJobs(page, [
    job('act-running', 'Running'),
    job('act-failed', 'Failed', { reason: 'node 1 exited', finished: ended })
  ]);
  const panel = await kale.openPanel();
  expect((await panel.boundingBox())!.width).toBeLessThanOrEqual(260);

  const expected: Record<string, string[]> = {
    'act-running': [
      'Logs of',
      'Stop',
      'Rerun',
      'Edit and rerun',
      'Delete',
      'Outputs of'
    ],
    'act-failed': [
      'Logs of',
      'Rerun',
      'Resume',
      'Edit and rerun',
      'Delete',
      'Load',
      'Outputs of'
    ]
  };
  for (const [name, actions] of Object.entries(expected)) {
    const row = kale.row(name);
    const strip = row.locator('.kale-ext-JobRow-actions');
    const names = actions.map(a =>
      a === 'Load' ? `Load ${name} into the notebook` : `${a} ${name}`
    );
    // each action by its name, in the row, in view
    for (const label of names) {
      await expect(row.getByLabel(label, { exact: true })).toBeVisible();
    }
    // one line: every control's middle the same, the strip one control
    // high, inside the row
    await kale.screenshot(`jobs-row-actions-${name}.png`, row, false);
    const controls = strip.locator(':scope > button, :scope > details');
    const middles = await controls.evaluateAll(nodes =>
      nodes.map(n => {
        const r = n.getBoundingClientRect();
        return Math.round(r.top + r.height / 2);
      })
    );
    expect(new Set(middles).size, name).toBe(1);
    const box = (await strip.boundingBox())!;
    expect(box.height, name).toBeLessThanOrEqual(28);
    const rowBox = (await row.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(rowBox.x + rowBox.width);
    // the keyboard: Tab goes through them in order, each named
    await row.getByLabel(names[0], { exact: true }).focus();
    const focused = [];
    for (let i = 0; i < names.length; i++) {
      focused.push(
        await page.evaluate(() =>
          document.activeElement?.getAttribute('aria-label')
        )
      );
      await page.keyboard.press('Tab');
    }
    expect(focused).toEqual(names);
  }

  // Enter opens a focused action: the outputs, below the actions
  const row = kale.row('act-failed');
  await row.getByLabel('Outputs of act-failed').focus();
  await page.keyboard.press('Enter');
  await expect(row.locator('.kale-ext-JobOutputs')).toHaveAttribute('open', '');
  await expect(row.locator('.kale-ext-JobOutputs')).toContainText(
    'No outputs yet'
  );
  const logs = await row.getByLabel('Logs of act-failed').boundingBox();
  const rerun = await row
    .getByLabel('Rerun act-failed', { exact: true })
    .boundingBox();
  expect(logs!.y).toBe(rerun!.y); // the buttons still in one line
});
