import { expect, galata, JOB_TIMEOUT, test } from './fixtures';

/**
 * What a user meets in the first hour with the panel (issue 41's walk): an
 * emptied parameter runs with its default, a name a job already has is
 * refused before Submit, a deleted job's logs tab closes (and one deleted
 * elsewhere is not restored by a reload), an edit after a reload's restore
 * leaves the note, and a sweep with no metric says its trials are not
 * ranked. Every browser console error fails a test (fixtures.ts): a 404
 * about a deleted job among them.
 */

test.use({
  viewport: { width: 1400, height: 1000 },
  // what a reload finds on disk is the notebook as it was opened
  mockSettings: {
    ...galata.DEFAULT_SETTINGS,
    '@jupyterlab/docmanager-extension:plugin': { autosave: false }
  }
});

test('an emptied parameter runs with its default; a taken name is refused before Submit; a deleted job’s logs tab closes, and is not restored once deleted elsewhere', async ({
  page,
  kale
}) => {
  const p = await kale.notebook(
    'walk.ipynb',
    [
      { source: 'steps = 3', tags: ['parameters'] },
      {
        source: [
          'import os',
          'print("steps", steps)',
          'with open(os.path.join(os.environ["KALE_EXT_OUTPUT_DIR"], "model.txt"), "w") as f:',
          '    f.write(str(steps))'
        ].join('\n')
      }
    ],
    { settle: true, compiles: true, timeout: 4 * JOB_TIMEOUT }
  );

  // Emptied: the default, said under the field, and nothing sent for it.
  const steps = p.getByLabel('Parameter steps', { exact: true });
  await steps.fill('');
  const row = p.locator('.kale-ext-ParamRow', {
    has: page.getByLabel('Parameter steps', { exact: true })
  });
  await expect(row).toContainText('empty: the default 3 is used');
  await expect(steps).toHaveAttribute('placeholder', '3');
  await kale.compiles();
  await expect(row.getByRole('alert')).toHaveCount(0);
  await kale.fill({ 'Job name': 'walk-run' });
  const sent = page.waitForRequest(
    r => /\/kale-ext\/jobs(\?.*)?$/.test(r.url()) && r.method() === 'POST'
  );
  const named = await kale.submit();
  expect(named).toBe('walk-run');
  expect(
    JSON.parse((await sent).postData() ?? '{}').options
  ).not.toHaveProperty('parameters');
  await kale.waitForStatus(named, 'Complete', JOB_TIMEOUT);
  await expect(
    kale.row(named).locator('.kale-ext-JobCol-parameters')
  ).toHaveText('defaults');
  const logs = await kale.openLogs(named);
  await expect(logs.getByRole('log')).toContainText('3', {
    timeout: JOB_TIMEOUT
  });

  // The same name again: said at the field, Submit not offered.
  await expect(
    p.locator('.kale-ext-Field-error', {
      hasText: 'a job named walk-run exists already'
    })
  ).toBeVisible();
  await expect(kale.submitButton).toBeDisabled();
  await kale.screenshot('walk-name-taken.png', p, false);
  await kale.fill({ 'Job name': '' });
  await kale.compiles();

  // Load into the notebook: no result, its output file named, the cell
  // left out of the job (the notebook still compiles), run it shows them.
  await page.notebook.activate('walk.ipynb');
  await page.notebook.selectCells(1);
  const checked = page.waitForResponse(
    r =>
      /\/kale-ext\/compile(\?.*)?$/.test(r.url()) &&
      (r.request().postData() ?? '').includes('get_job')
  );
  const load = kale
    .row(named)
    .getByRole('button', { name: `Load ${named} into the notebook` });
  await expect(load).toHaveAttribute('title', /lists its 1 output file$/, {
    timeout: JOB_TIMEOUT
  });
  await load.click();
  expect((await (await checked).json()).errors).toEqual([]);
  await kale.compiles();
  expect(await kale.cellTags(2)).toEqual(['skip']);
  await page.notebook.runCell(2, true);
  const shown = (await page.notebook.getCellTextOutput(2)) ?? [];
  expect(shown.join('')).toMatch(
    new RegExp(`^<outputs of ${named} in .*: model\\.txt \\(1 B\\)>$`)
  );
  expect(
    await page.evaluate(
      () =>
        (
          window.jupyterapp.shell.currentWidget as any
        ).content.model.sharedModel.cells[2].getSource() as string
    )
  ).toContain(`# ${named} saved no result`);

  // Deleted with its logs tab open: the tab closes.
  await kale.deleteJob(named);
  await expect(kale.logs(named)).toHaveCount(0);

  // Two more; one is deleted elsewhere (the REST API) while its tab is
  // open: after a reload, only the other's tab comes back.
  const gone = await kale.submit();
  const stays = await kale.submit();
  for (const name of [gone, stays]) {
    await kale.waitForStatus(name, 'Complete', JOB_TIMEOUT);
  }
  const saved = page.waitForRequest(r => {
    const put = r.method() === 'PUT' && r.url().includes('/api/workspaces');
    const data = put ? (r.postData() ?? '') : '';
    return data.includes(`kale-ext-logs:${gone}`) && data.includes(stays);
  });
  await kale.openLogs(gone);
  await kale.openLogs(stays);
  await saved;
  const deleted = await page.request.delete(`kale-ext/jobs/${gone}`);
  expect(deleted.status()).toBeLessThan(300);
  await kale.reloadLeaving();
  // (both tabs are restored through the same reading of the jobs list)
  await expect(kale.logs(stays)).toBeAttached({ timeout: 30_000 });
  await expect(kale.logs(gone)).toHaveCount(0);
  await kale.openPanel();
  await expect(kale.row(stays)).toBeVisible();
  await expect(kale.row(gone)).toHaveCount(0);
});

test('a field edited after a reload’s restore leaves the note, and “Use the notebook’s values” leaves the edit as it is', async ({
  kale
}) => {
  await kale.parameters('restore.ipynb', 'epochs = 2', {
    settle: true,
    compiles: true
  });
  const both = kale.kept('"epochs":"5"');
  await kale.fill({ Nodes: '2', 'Parameter epochs': '5' });
  await both;
  await kale.reloadLeaving();
  const again = await kale.openPanel();
  const note = kale.restoredNote;
  await expect(note).toBeVisible({ timeout: 30_000 });
  const fields = note.locator('li');
  await expect(fields).toHaveText([
    'nodes: 2 (the notebook: none)',
    'parameter epochs: 5 (the notebook: none)'
  ]);

  // Nodes edited: no longer a restored value, the note lists epochs only.
  await kale.fill({ Nodes: '3' });
  await expect(fields).toHaveText(['parameter epochs: 5 (the notebook: none)']);
  await again
    .getByRole('button', { name: "Use the notebook's values" })
    .click();
  await expect(note).toHaveCount(0);
  await expect(again.getByLabel('Nodes', { exact: true })).toHaveValue('3');
  await expect(
    again.getByLabel('Parameter epochs', { exact: true })
  ).toHaveValue('2');

  // The last restored fields edited: the note leaves.
  const last = kale.kept('"epochs":"7"');
  await kale.fill({ 'Parameter epochs': '7' });
  await last;
  await kale.reloadLeaving();
  await kale.openPanel();
  await expect(note).toBeVisible({ timeout: 30_000 });
  await kale.fill({ Nodes: '', 'Parameter epochs': '2' });
  await expect(note).toHaveCount(0);
});

test('a sweep with no metric says its trials are not ranked, and its form shows no made-up metric', async ({
  page,
  kale
}) => {
  const p = await kale.parameters('nometric.ipynb', 'lr = 0.1', {
    settle: true,
    compiles: true,
    timeout: 3 * JOB_TIMEOUT
  });
  await p.getByRole('button', { name: 'Sweep lr' }).click();
  await kale.fill({ 'Sweep values of lr': '0.1, 0.2', 'Trials at once': '2' });
  const metric = p.getByLabel('Sweep metric');
  await expect(metric).toHaveValue('');
  await expect(metric).not.toHaveAttribute('placeholder');
  await expect(p).toContainText('none: trials are not ranked');
  const response = await kale.startSweep();
  expect(response.status(), await response.text()).toBe(201);
  const sweep = (await response.json()).name as string;
  const view = page.locator(`.kale-ext-SweepView[data-sweep="${sweep}"]`);
  await expect(view.locator('tbody tr[data-status="Complete"]')).toHaveCount(
    2,
    { timeout: JOB_TIMEOUT }
  );
  await expect(view.getByRole('note')).toContainText(
    'No metric was chosen, so no trial is ranked or marked best'
  );
  await expect(view.locator('thead th')).toHaveText([
    /^Trial/,
    'Job',
    'Parameters',
    'Status'
  ]);
  await expect(view.locator('tbody')).not.toContainText('—');
  await kale.screenshot('sweep-no-metric.png', view, false);
});
