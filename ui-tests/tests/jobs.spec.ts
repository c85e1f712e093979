import { expect, JOB_TIMEOUT, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 900 } });

const TRAIN = [
  'from kale_ext import report',
  'for e in range(1, epochs + 1):',
  '    report(step=e, accuracy=e / 10)',
  'if fail:',
  '    raise KeyError("label")',
  'print("trained", epochs)'
].join('\n');

test('the jobs list: this notebook or all, parameters, duration, final metric, failure, sorted by any column; its choices and the log tabs survive a reload', async ({
  kale,
  page
}) => {
  test.setTimeout(3 * JOB_TIMEOUT);
  // Another notebook's job, then this notebook's three.
  const settle = { settle: true };
  await kale.notebook('other.ipynb', [{ source: 'print("other")' }], settle);
  const p = await kale.notebook(
    'sweep.ipynb',
    [
      { source: 'epochs = 2\nfail = False', tags: ['parameters'] },
      { source: TRAIN }
    ],
    settle
  );
  await page.notebook.activate('other.ipynb');
  await expect(p.locator('.kale-ext-Notebook')).toContainText('other.ipynb');
  const other = await kale.submit();
  await page.notebook.activate('sweep.ipynb');
  await expect(p.locator('.kale-ext-Notebook')).toContainText('sweep.ipynb');
  const two = await kale.submit();
  const five = await kale.submit({ epochs: '5' });
  const failed = await kale.submit({ epochs: '1', fail: 'True' });

  // Wait for all three to end.
  await kale.waitForStatus(two, 'Complete', JOB_TIMEOUT);
  await kale.waitForStatus(five, 'Complete', JOB_TIMEOUT);
  await kale.waitForStatus(failed, 'Failed', JOB_TIMEOUT);

  // This notebook's jobs only; then all.
  const rows = p.locator('.kale-ext-JobRow');
  await expect(rows).toHaveCount(3);
  const filter = p.getByRole('radiogroup', { name: 'Show jobs of' });
  await expect(kale.row(other)).toHaveCount(0);
  // (all: the other notebook's job too, and any job of the tests before)
  await filter.getByRole('radio', { name: 'All' }).click();
  await expect(kale.row(other)).toBeVisible();
  expect(await rows.count()).toBeGreaterThanOrEqual(4);
  await filter.getByRole('radio', { name: 'This notebook' }).click();
  await expect(rows).toHaveCount(3);

  // Key parameters, duration, final metric.
  const cell = (name: string, column: string) =>
    kale.row(name).locator(`.kale-ext-JobCol-${column}`);
  await expect(cell(five, 'parameters')).toHaveText('epochs=5');
  await expect(cell(two, 'parameters')).toHaveText('defaults');
  // (a duration, however long a loaded machine takes: `8.2s`, `2m 17s`)
  await expect(cell(five, 'duration')).toHaveText(/^(\d+m )?\d+(\.\d)?s$/);
  await expect(cell(five, 'metric')).toHaveText('0.5 step 5', {
    timeout: JOB_TIMEOUT
  });
  await expect(cell(two, 'metric')).toHaveText('0.2 step 2');

  // Sort by the metric: best first, then worst first (in the panel's
  // default width, the order is chosen in one line: no column headers).
  const names = async () => (await kale.jobs()).map(job => job.name);
  await expect(cell(failed, 'metric')).toHaveText('0.1 step 1');
  const order = p.locator('.kale-ext-JobSort');
  await order.getByLabel('Sort by').selectOption({ label: 'accuracy' });
  await expect.poll(names).toEqual([five, two, failed]);
  await order.getByRole('button', { name: 'Sorted ascending' }).click();
  await expect.poll(names).toEqual([failed, two, five]);

  // The failure: who, where, why; its cell one click away.
  const reason = kale.row(failed).locator('.kale-ext-JobRow-reason');
  await expect(reason).toContainText("KeyError: 'label'", {
    timeout: JOB_TIMEOUT
  });
  await expect(reason).toContainText('cell 2');
  await kale.widen(420);
  // "Hide finished older than" and its select: apart on one line, or the
  // select on the next (they ran into each other: prune.css was not loaded).
  const hide = p.locator('.kale-ext-Prune');
  const label = (await hide
    .getByText('Hide finished older than')
    .boundingBox())!;
  const select = (await hide
    .getByLabel('Hide finished older than')
    .boundingBox())!;
  expect(
    select.x >= label.x + label.width + 4 || select.y >= label.y + label.height
  ).toBe(true);
  await kale.screenshot('panel-jobs.png', p);
  await reason.getByRole('button', { name: /at the cell that failed/ }).click();
  // (other.ipynb is open too: the cell of the notebook in front)
  await expect(
    page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell').nth(1)
  ).toHaveClass(/jp-mod-active/);
  expect((await kale.cursor()).line).toBe(4); // line 5, counted from 0

  // Reload: the list's choices and the open log tabs come back.
  // (JupyterLab saves the workspace a moment after a change: reload once
  // the filter and the log tab are saved)
  const saved = page.waitForRequest(r => {
    const body = r.method() === 'PUT' && r.url().includes('/api/workspaces');
    const data = body ? (r.postData() ?? '') : '';
    return data.includes('"filter":"all"') && data.includes(five);
  });
  await filter.getByRole('radio', { name: 'All' }).click();
  await kale.openLogs(five);
  await saved;
  await kale.reload(); // the layout, the panel open as it was
  await expect(kale.logs(five)).toBeAttached({ timeout: 30_000 });
  await expect(kale.logs(failed)).toBeAttached();
  const again = await kale.openPanel();
  await expect(
    again
      .getByRole('radiogroup', { name: 'Show jobs of' })
      .getByRole('radio', { name: 'All' })
  ).toHaveAttribute('aria-checked', 'true');
  await expect(kale.row(other)).toBeVisible();
});
