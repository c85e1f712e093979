import { brokenInWords, expect, JOB_TIMEOUT, KaleUI, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 900 } });

const PARAMETERS = 'lr = 0.1';
const TRAIN = [
  'from kale_ext import report',
  'for step in range(1, 5):',
  '    report(step=step, loss=1 / (1 + lr * step))'
].join('\n');

/**
 * The panel of a notebook whose `lr` parameter sweeps, running `train`, in a
 * test that may take `timeout` ms.
 */
async function setUp(
  kale: KaleUI,
  timeout: number,
  train = TRAIN,
  notebook = 'compare.ipynb'
) {
  const p = await kale.notebook(
    notebook,
    [{ source: PARAMETERS, tags: ['parameters'] }, { source: train }],
    { settle: true, timeout }
  );
  await expect(p.locator('.kale-ext-Notebook')).toContainText(notebook);
  return p;
}

test('two jobs with a different parameter, compared side by side: the difference marked, both curves on one plot', async ({
  kale,
  page
}) => {
  const p = await setUp(kale, 3 * JOB_TIMEOUT);
  const slow = await kale.submit();
  const fast = await kale.submit({ lr: '0.5' });
  for (const name of [slow, fast]) {
    await kale.waitForStatus(name, 'Complete', JOB_TIMEOUT);
  }

  const compare = p.getByRole('button', { name: /^Compare/ });
  await expect(compare).toBeDisabled();
  await p.getByLabel(`Select ${slow} to compare`).check();
  await p.getByLabel(`Select ${fast} to compare`).check();
  await expect(compare).toHaveText('Compare (2)');
  await compare.click();

  const view = page.locator('.kale-ext-CompareView');
  await expect(view).toBeVisible();
  const lr = view.locator('tr[data-key="parameters.lr"]');
  await expect(lr).toHaveAttribute('data-differs', 'true');
  await expect(lr.locator('td')).toHaveText(['default', '0.5']);
  await expect(view.locator('tr[data-key="runtime"]')).toHaveAttribute(
    'data-differs',
    'false'
  );
  // The loss of both jobs on one plot, a line per job named in its legend.
  const chart = view.locator('figure[data-metric="loss"]');
  await expect(chart.locator('g.kale-ext-Metric-series')).toHaveCount(2, {
    timeout: 30_000
  });
  await expect(chart.locator('g.kale-ext-Metric-series path')).toHaveCount(2);
  await expect(chart.locator('.kale-ext-Metric-who')).toHaveText([slow, fast]);
  await expect(view.locator('tr[data-key="metrics.loss"]')).toHaveAttribute(
    'data-differs',
    'true'
  );
  // Squeezed between the panel and the logs, the labels wrap at spaces only
  // (they broke inside words: "Backen d").
  const labels = view.locator('.kale-ext-CompareTable th[scope="row"]');
  await expect(labels.first()).toBeVisible();
  expect(await brokenInWords(labels)).toEqual([]);
  await kale.screenshot('compare.png');
});

test('a grid sweep from the panel: two values, two at once; its view lists the trials with the best marked', async ({
  kale,
  page
}) => {
  const p = await setUp(kale, 3 * JOB_TIMEOUT);
  await p.getByRole('button', { name: 'Sweep lr' }).click();
  const values = p.getByLabel('Sweep values of lr');
  await values.fill('0.1, loguniform(1e-3, 1)');
  await expect(p.locator('.kale-ext-ParamRow [role="alert"]')).toHaveText(
    /"loguniform\(1e-3, 1\)" is not a number|a range needs a random or tpe search/
  );
  await expect(p.getByRole('button', { name: 'Start sweep' })).toBeDisabled();
  await kale.fill({
    'Sweep values of lr': '0.1, 0.5',
    'Trials at once': '2',
    'Sweep metric': 'loss'
  });
  const response = await kale.startSweep();
  expect(response.status()).toBe(201);
  const sweep = (await response.json()).name as string;

  const view = page.locator(`.kale-ext-SweepView[data-sweep="${sweep}"]`);
  await expect(view).toBeVisible();
  const trials = view.locator('tbody tr');
  await expect(trials).toHaveCount(2, { timeout: JOB_TIMEOUT });
  await expect(view.locator('tbody tr[data-status="Complete"]')).toHaveCount(
    2,
    { timeout: JOB_TIMEOUT }
  );
  // lower loss is better: lr=0.5's trial is the best, listed first
  const best = view.locator('tbody tr[data-best="true"]');
  await expect(best).toHaveCount(1);
  await expect(best).toContainText('lr=0.5');
  await expect(best).toContainText('best');
  await expect(trials.first()).toHaveAttribute('data-best', 'true');
  // sorted the other way, the best goes last
  const sort = view.getByRole('button', { name: 'Sort by loss' });
  await sort.click();
  await expect(trials.last()).toHaveAttribute('data-best', 'true');
  await sort.click();
  await expect(trials.first()).toHaveAttribute('data-best', 'true');

  // the trials are ordinary jobs, marked with their sweep in the list
  await expect(
    p.getByRole('button', { name: new RegExp(`^Sweep ${sweep} of `) })
  ).toHaveCount(2);
  await kale.screenshot('sweep.png');
});

test('a sweep cancelled from its tab: no more trials, the running one stopped and kept as Cancelled', async ({
  kale,
  page
}) => {
  // Each trial waits until it is stopped.
  const waits = ['import threading', 'threading.Event().wait()'].join('\n');
  const p = await setUp(kale, 2 * JOB_TIMEOUT, waits, 'cancel.ipynb');
  await p.getByRole('button', { name: 'Sweep lr' }).click();
  await kale.fill({ 'Sweep values of lr': '0.1, 0.5', 'Trials at once': '1' });
  const sweep = (await (await kale.startSweep()).json()).name as string;

  const view = page.locator(`.kale-ext-SweepView[data-sweep="${sweep}"]`);
  const trials = view.locator('tbody tr');
  await expect(trials).toHaveCount(1, { timeout: JOB_TIMEOUT });
  await expect(trials.first()).toHaveAttribute('data-status', 'Running', {
    timeout: JOB_TIMEOUT
  });
  const cancel = view.getByRole('button', { name: 'Cancel sweep' });
  await cancel.click();
  const dialog = page.locator('.jp-Dialog');
  await expect(dialog).toContainText('No more trials start');
  await expect(dialog).toContainText('stopped and kept');
  const cancelled = page.waitForResponse(
    r =>
      r.url().includes(`/kale-ext/sweeps/${sweep}`) &&
      r.request().method() === 'DELETE'
  );
  await dialog.getByRole('button', { name: 'Cancel sweep' }).click();
  expect((await cancelled).status()).toBe(200);

  await expect(view).toHaveAttribute('data-status', 'Cancelled');
  await expect(trials.first()).toHaveAttribute('data-status', 'Cancelled', {
    timeout: JOB_TIMEOUT
  });
  await expect(trials).toHaveCount(1);
  await expect(cancel).toBeDisabled();
});
