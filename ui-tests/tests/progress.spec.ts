import * as fs from 'fs';

import { expect, screenshot, test, timelineFootProblems } from './fixtures';

/**
 * Jobs really run here (the local backend, two nodes): give them time.
 */
const JOB_TIMEOUT = 180_000;

/**
 * The job: `steps` steps reported with `report(step=i, total=steps)`,
 * `delay` seconds apart; before its last step it waits for `gate` to exist
 * (the test creates it), so the test sees it running for as long as it
 * looks; it returns a dict.
 */
function fit(gate: string): string {
  return [
    'def fit(steps=40, delay=0.5,',
    // (not on the first line, which a folded cell still shows)
    `        gate=${JSON.stringify(gate)}):`,
    '    import os, time',
    '    from kale_ext import report',
    '    for i in range(1, steps + 1):',
    '        if i == steps:',
    '            for _ in range(1200):  # at most 10 min',
    '                if os.path.exists(gate):',
    '                    break',
    '                time.sleep(0.5)',
    '        else:',
    '            time.sleep(delay)',
    '        report(step=i, total=steps, loss=round(1 / i, 4))',
    '    return {"steps": steps, "loss": round(1 / steps, 4)}'
  ].join('\n');
}

test.use({ viewport: { width: 1400, height: 900 } });

test('a running 2-node job shows a progress bar with an ETA in its row and its logs; once it ends, its state, and "Load into the notebook" inserts the cell that loads its result', async ({
  page,
  kale
}, testInfo) => {
  test.setTimeout(3 * JOB_TIMEOUT);
  const gate = testInfo.outputPath('gate');
  fs.rmSync(gate, { force: true });
  await kale.notebook(
    'progress.ipynb',
    [{ source: fit(gate), tags: ['entrypoint'] }, { source: 'print("after")' }],
    { settle: true }
  );
  await kale.compiles();
  await kale.fill({ Nodes: '2' });
  await kale.compiles();
  const name = await kale.submit();
  const row = kale.row(name);

  // Running: the bar comes, with a time left once the rate is known.
  const bar = row.getByRole('progressbar', { name: `Progress of ${name}` });
  await expect(bar).toBeVisible({ timeout: JOB_TIMEOUT });
  await expect(row).toHaveAttribute('data-status', 'Running');
  await expect(bar).toHaveAttribute(
    'aria-valuetext',
    /^\d+ % · (about \d+ min|less than a minute) left$/,
    { timeout: JOB_TIMEOUT }
  );
  const value = Number(await bar.getAttribute('aria-valuenow'));
  expect(value).toBeGreaterThan(0);
  expect(value).toBeLessThan(100);
  await expect(bar).toHaveAttribute(
    'title',
    /^Progress from kale_ext\.report\(\) · step \d+ of 40 · /
  );

  // The logs view's header shows it too.
  const logs = await kale.openLogs(name);
  const header = logs.getByRole('progressbar', { name: `Progress of ${name}` });
  await expect(header).toBeVisible();
  await expect(header).toHaveAttribute('aria-valuetext', /^\d+ %/);

  await page.mouse.move(0, 0); // no hover effect in the screenshots
  await expect(bar).toBeVisible(); // (the job waits for the gate)
  // The notebook beside the logs: its code folded, so the screenshots do
  // not show the gate's path (this machine's test folder; a folded cell
  // shows its first line only).
  const code = (command: string) =>
    page.evaluate(id => window.jupyterapp.commands.execute(id), command);
  await code('notebook:hide-all-cell-code');
  await expect(page.locator('.jp-Notebook .jp-Cell-inputArea')).toHaveCount(0);
  // The logs view beside the notebook is narrow: the timeline's legend stays
  // whole (it was cut at the bottom of the insights).
  await expect(logs.locator('.kale-ext-Timeline-legend')).toBeVisible();
  expect(await timelineFootProblems(logs)).toEqual([]);
  await screenshot(page, testInfo, 'progress.png');
  await page.theme.setDarkTheme();
  await expect(bar).toBeVisible();
  await screenshot(page, testInfo, 'progress-dark.png');
  await page.theme.setLightTheme();
  await code('notebook:show-all-cell-code');

  // Ended: its state, no stale bar, here or in its logs.
  fs.writeFileSync(gate, '');
  await kale.waitForStatus(name, 'Complete', JOB_TIMEOUT);
  await expect(row.getByRole('progressbar')).toHaveCount(0);
  await expect(logs.locator('.kale-ext-LogsStatus')).toContainText(
    'Ended: Complete',
    { timeout: JOB_TIMEOUT }
  );
  await expect(logs.getByRole('progressbar')).toHaveCount(0);

  // "Load into the notebook": below the active cell, selected, not run.
  await page.notebook.activate('progress.ipynb');
  await page.notebook.save();
  await page.notebook.selectCells(0);
  const load = row.getByRole('button', {
    name: `Load ${name} into the notebook`
  });
  await expect(load).toHaveAttribute(
    'title',
    /loads its result \(json, \d+ B\)$/,
    { timeout: JOB_TIMEOUT }
  );
  await expect(load).not.toHaveAttribute('aria-disabled', 'true');
  // the notebook is checked again with the inserted cell
  const checked = page.waitForResponse(
    r =>
      /\/kale-ext\/compile(\?.*)?$/.test(r.url()) &&
      (r.request().postData() ?? '').includes('get_job')
  );
  await load.click();
  await expect(row.getByRole('status')).toContainText(
    'Inserted cell 2 of progress.ipynb: run it to load the result'
  );
  // below the active cell, the one selected, in command mode, not run
  const notebook = await page.evaluate(() => {
    const nb = (window.jupyterapp.shell.currentWidget as any).content;
    return {
      cells: nb.model.sharedModel.cells.map((c: any) => ({
        source: c.getSource(),
        outputs: c.toJSON().outputs ?? null
      })),
      selected: nb.widgets.map((w: any) => nb.isSelectedOrActive(w)),
      mode: nb.mode
    };
  });
  expect(notebook.cells.slice(1)).toEqual([
    {
      source: [
        'from kale_ext import get_job',
        `result = get_job("${name}").result()`,
        `# get_job("${name}").outputs: the files it wrote; .load("name") reads one`,
        'result'
      ].join('\n'),
      outputs: []
    },
    { source: 'print("after")', outputs: [] }
  ]);
  expect(notebook.selected).toEqual([false, true, false]);
  expect(notebook.mode).toBe('command');
  await expect(page.getByRole('tab', { name: /progress\.ipynb/ })).toHaveClass(
    /jp-mod-dirty/
  );

  // Left out of the job (it is no training code): the notebook still compiles.
  expect(await kale.cellTags(1)).toEqual(['skip']);
  expect((await (await checked).json()).errors).toEqual([]);
  await kale.compiles();

  // Run, it shows what the job returned.
  await page.notebook.runCell(1, true);
  expect(await page.notebook.getCellTextOutput(1)).toEqual([
    "{'steps': 40, 'loss': 0.025}"
  ]);

  // Its notebook gone since, the cell goes to the current notebook.
  await page.notebook.save();
  await page.notebook.close();
  expect(
    await page.contents.renameFile(
      kale.path('progress.ipynb'),
      kale.path('renamed.ipynb')
    )
  ).toBe(true);
  await page.sidebar.openTab('filebrowser'); // (galata opens files from it)
  const panel = await kale.notebook('other.ipynb', [{ source: 'x = 1' }]);
  await panel
    .getByRole('radiogroup', { name: 'Show jobs of' })
    .getByRole('radio', { name: 'All' })
    .click();
  await page.notebook.selectCells(0);
  await load.click();
  await expect(row.getByRole('status')).toContainText(
    'Inserted cell 2 of other.ipynb: run it to load the result'
  );
  expect(
    await page.evaluate(() =>
      (
        window.jupyterapp.shell.currentWidget as any
      ).content.model.sharedModel.cells.map((c: any) => c.getSource())
    )
  ).toEqual(['x = 1', notebook.cells[1].source]);
});
