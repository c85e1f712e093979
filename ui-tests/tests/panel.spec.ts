import { expect, JOB_TIMEOUT, TALL, test, unnamedControls } from './fixtures';

test.describe('the kale_ext panel with a notebook', () => {
  test.use({ viewport: TALL });

  test('tags a cell, submits the example on 2 nodes, streams both ranks and deletes the job', async ({
    kale,
    page
  }) => {
    const panel = await kale.example({ timeout: JOB_TIMEOUT + 60_000 });

    // The backend the jobs go to, and why.
    await expect(panel.locator('.kale-ext-Backend')).toContainText('Local');

    // Tag the evaluation cell (index 9, untagged) `training` with the editor.
    const evaluation = page.locator('.jp-Notebook .jp-Cell').nth(9);
    await evaluation.locator('.jp-InputPrompt').click();
    const tags = panel.getByRole('radiogroup', { name: 'Role of cell 10' });
    await expect(tags).toBeVisible();
    await tags.getByRole('radio', { name: 'training' }).click();
    await expect(tags.getByRole('radio', { name: 'training' })).toBeChecked();
    await expect(evaluation).toHaveClass(/kale-ext-tag-training/);
    await expect(evaluation).toHaveAttribute('data-kale-ext-tags', 'training');
    // The badge follows the tags metadata whoever writes it: the example's
    // own tags are shown too.
    await expect(page.locator('.jp-Notebook .jp-Cell').nth(1)).toHaveClass(
      /kale-ext-tag-imports/
    );
    expect(await kale.cellTags(9)).toEqual(['training']);

    // Runtime, 2 nodes, epochs=1.
    await panel
      .getByLabel('Runtime', { exact: true })
      .selectOption('torch-distributed');
    await expect(
      panel.getByLabel('Details of runtime torch-distributed')
    ).toContainText('torch');
    await kale.fill({
      Nodes: '2',
      'Parameter epochs': '1',
      'CPU request per node': '500m',
      'CPU limit per node': '2'
    });
    await panel.getByRole('button', { name: 'Add variable' }).click();
    await panel
      .getByLabel('Name of environment variable 1')
      .fill('OMP_NUM_THREADS');
    await panel.getByLabel('Value of OMP_NUM_THREADS').fill('1');
    await expect(kale.validation).toHaveText(/Compiles: /);
    await expect(kale.submitButton).toBeEnabled();

    // The choices are in the notebook's metadata, written through its model.
    await expect
      .poll(() => kale.metadata())
      .toEqual({
        options: {
          runtime: 'torch-distributed',
          nodes: 2,
          // as typed: the server types it by the notebook's parameters cell
          parameters: { epochs: '1' }
        },
        config: {
          requests: { cpu: '500m' },
          limits: { cpu: '2' },
          env: [{ name: 'OMP_NUM_THREADS', value: '1' }]
        }
      });

    // The preview shows the 2 nodes.
    await expect(panel.getByLabel('TrainJob YAML')).toContainText(
      'numNodes: 2'
    );
    await kale.panelScreenshot('panel-form.png');

    const name = await kale.submit();
    const row = kale.row(name);
    await expect(row).toBeVisible();
    await expect(row).toContainText('torch-distributed');
    await expect(row).toContainText('2 nodes');

    // Logs: both ranks stream in.
    const logs = await kale.openLogs(name);
    const lines = logs.getByRole('log');
    const rank = (r: number) =>
      lines.locator(`.kale-ext-LogLine[data-rank="${r}"]`);
    await expect(rank(0).first()).toBeVisible({ timeout: JOB_TIMEOUT });
    await expect(rank(1).first()).toBeVisible({ timeout: JOB_TIMEOUT });
    await kale.screenshot('panel-running-logs.png');

    // Per-node tabs.
    await logs.getByRole('tab', { name: 'Node 1' }).click();
    await expect(rank(0)).toHaveCount(0);
    await expect(rank(1).first()).toBeVisible();
    await logs.getByRole('tab', { name: 'Node 0' }).click();
    await expect(rank(1)).toHaveCount(0);
    await expect(rank(0).first()).toBeVisible();
    await logs.getByRole('tab', { name: 'All nodes' }).click();

    // The job completes; the stream ends with it.
    await kale.waitForStatus(name, 'Complete', JOB_TIMEOUT);
    await expect(logs.locator('.kale-ext-LogsStatus')).toContainText(
      'Ended: Complete'
    );
    await expect(lines).toContainText('test accuracy');

    // Delete it.
    await kale.deleteJob(name);
    await expect(kale.notice).toContainText(`Deleted ${name}`);

    // An old notice goes once the form is invalid: it no longer describes
    // what Submit would do.
    await panel.getByLabel('Memory limit per node').fill('abc');
    await expect(kale.notice).toHaveCount(0);
  });

  test('a compile error links to its cell', async ({ kale, page }) => {
    const panel = await kale.notebook('broken.ipynb', [
      { source: 'import os', tags: ['imports'] },
      { source: '# A notebook with a mistake', type: 'markdown' },
      { source: 'rows = 3' },
      { source: 'print(rows)\nprint(undefined_frame.head())' }
    ]);
    await expect(kale.validation).toHaveText(/\d+ errors?/);
    const error = panel
      .locator('.kale-ext-Diagnostic.kale-ext-mod-error')
      .first();
    await expect(error).toContainText('undefined_frame');
    await expect(kale.submitButton).toBeDisabled();

    // The link selects the cell (index 3, "cell 4").
    await page.notebook.selectCells(0);
    await error.getByRole('button', { name: /Go to cell 4/ }).click();
    await expect(page.locator('.jp-Notebook .jp-Cell').nth(3)).toHaveClass(
      /jp-mod-active/
    );
    await kale.panelScreenshot('panel-compile-error.png');

    // Fixing the cell (an unsaved change) clears the error.
    await page.notebook.setCell(3, 'code', 'print(rows)');
    await kale.compiles();
    await expect(kale.submitButton).toBeEnabled();
  });

  test('a failed job shows its reason (light and dark themes)', async ({
    kale,
    page
  }) => {
    test.setTimeout(JOB_TIMEOUT);
    await kale.notebook('failing.ipynb', [
      { source: 'threshold = 0.5', tags: ['parameters'] },
      {
        source:
          'print("loading the data")\nraise RuntimeError(f"no data above {threshold}")'
      }
    ]);
    await kale.compiles();
    const name = await kale.submit();
    const row = kale.row(name);
    await kale.waitForStatus(name, 'Failed', JOB_TIMEOUT);
    await expect(row.locator('.kale-ext-JobRow-reason')).not.toBeEmpty();
    await kale.panelScreenshot('panel-failed.png');

    // The logs tell why.
    const logs = await kale.openLogs(name);
    await expect(logs.getByRole('log')).toContainText('no data above 0.5');
    await expect(logs.locator('.kale-ext-LogsStatus')).toContainText(
      'Ended: Failed'
    );

    // The dark theme: the panel, the notebook's tag badges.
    await page.theme.setDarkTheme();
    await page.notebook.activate('failing.ipynb');
    await row.scrollIntoViewIfNeeded();
    await kale.screenshot('panel-dark.png');
    await page.theme.setLightTheme();
  });
});

test('the choices live in the notebook metadata, and Undo reverts them', async ({
  kale,
  page
}) => {
  // A notebook that already has choices (written by the panel, or by hand).
  const stored = {
    options: { nodes: 2, gpu: 'mig-1g.5gb', parameters: { lr: 0.5 } },
    config: {
      requests: { cpu: '500m' },
      env: [
        { name: 'MODE', value: 'fast' },
        {
          name: 'TOKEN',
          valueFrom: { secretKeyRef: { name: 'hf', key: 'token' } }
        }
      ],
      labels: { team: 'ml' }
    }
  };
  const panel = await kale.parameters('stored.ipynb', 'lr = 0.1', {
    metadata: { kale_ext: stored }
  });
  const nodes = panel.getByLabel('Nodes', { exact: true });
  await expect(nodes).toHaveValue('2');
  await expect(panel.getByLabel('GPUs per node')).toHaveValue('mig');
  await expect(panel.getByLabel('MIG profile')).toHaveValue('mig-1g.5gb');
  await expect(panel.getByLabel('CPU request per node')).toHaveValue('500m');
  await expect(panel.getByLabel('Parameter lr')).toHaveValue('0.5');
  await expect(panel.getByLabel('Value of MODE')).toHaveValue('fast');
  await expect(
    panel.getByLabel('Secret of TOKEN', { exact: true })
  ).toHaveValue('hf');
  await expect(panel.getByLabel('Key in the secret of TOKEN')).toHaveValue(
    'token'
  );
  // Reading writes nothing.
  expect(await kale.metadata()).toEqual(stored);

  // A change goes into the model (the notebook is now unsaved) ...
  await nodes.fill('4');
  await expect
    .poll(() => kale.metadata())
    .toEqual({
      options: { nodes: 4, gpu: 'mig-1g.5gb', parameters: { lr: 0.5 } },
      config: {
        labels: { team: 'ml' },
        requests: { cpu: '500m' },
        env: [
          { name: 'MODE', value: 'fast' },
          {
            name: 'TOKEN',
            valueFrom: { secretKeyRef: { name: 'hf', key: 'token' } }
          }
        ]
      }
    });

  // ... and Undo in the notebook takes it back, in the panel too.
  await page.notebook.selectCells(1);
  await page.keyboard.press('Escape');
  await page.keyboard.press('z');
  await expect(nodes).toHaveValue('2');
  await page.keyboard.press('Shift+z');
  await expect(nodes).toHaveValue('4');
});

test('the job form says which defaults apply and opens their editor', async ({
  kale,
  page
}) => {
  const panel = await kale.notebook('defaults.ipynb', [{ source: 'print(1)' }]);
  // The text depends on the machine's settings: only that it is there.
  const line = panel.locator('[data-section="job"] .kale-ext-Defaults');
  await expect(line).toContainText('Empty fields use the');
  await line.getByRole('button', { name: 'Edit defaults' }).click();
  // JupyterLab's Settings Editor, filtered to kale_ext's defaults.
  const editor = page.locator('#setting-editor');
  await expect(editor).toBeVisible();
  await expect(editor).toContainText('Runtime');
  await expect(editor).toContainText('GPUs per node');
});

test('every control of the panel is labelled and reachable by keyboard', async ({
  kale,
  page
}) => {
  const panel = await kale.parameters('keyboard.ipynb', 'lr = 0.1', {
    compiles: true
  });
  // Open every section and add an environment variable of each kind.
  // (the preview is open from the start)
  await expect(panel.locator('[data-section="preview"]')).toHaveAttribute(
    'open',
    ''
  );
  for (const section of ['packages']) {
    await panel.locator(`[data-section="${section}"] > summary`).click();
    await expect(panel.locator(`[data-section="${section}"]`)).toHaveAttribute(
      'open',
      ''
    );
  }
  await panel.getByRole('button', { name: 'Add variable' }).click();
  await panel.getByRole('button', { name: 'Add variable' }).click();
  await panel.getByLabel('Source of variable 2').selectOption('secret');
  await panel.getByLabel('GPUs per node').selectOption('mig');

  // Every control has a name.
  const unnamed = await unnamedControls(panel);
  expect(unnamed).toEqual([]);

  // Tab visits every enabled control, in order. (Once the panel has settled:
  // the form's last changes recompile, and the preview they re-render holds
  // new elements, counted afresh on the next pass.)
  await expect(async () => {
    const expected = await panel.evaluate(root => {
      // (what a folded section holds is out of reach until it is opened)
      const folded = (el: HTMLElement) => {
        const section = el.closest('details:not([open])');
        return section !== null && el.parentElement !== section;
      };
      const all = [
        ...root.querySelectorAll<HTMLElement>(
          'input, select, textarea, button:not([disabled]), summary, [tabindex="0"]'
        )
      ].filter(el => !folded(el));
      all.forEach((el, i) => (el.dataset.kaleExtFocusId = String(i)));
      return all.length;
    });
    await panel.locator('summary').first().focus();
    const visited = new Set<string>();
    for (let i = 0; i < expected + 5; i++) {
      const id = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        return el?.closest('#kale-ext-panel')
          ? (el.dataset.kaleExtFocusId ?? '?')
          : null;
      });
      if (id === null) {
        break;
      }
      visited.add(id);
      await page.keyboard.press('Tab');
    }
    expect(visited.size).toBe(expected);
  }).toPass();

  // The keyboard drives the form: type into Nodes, toggle a tag with Space.
  const nodes = panel.getByLabel('Nodes', { exact: true });
  await nodes.focus();
  await page.keyboard.type('3');
  await expect(nodes).toHaveValue('3');
  await page
    .locator('.jp-Notebook .jp-Cell')
    .nth(1)
    .locator('.jp-InputPrompt')
    .click();
  const skip = panel
    .getByRole('radiogroup', { name: 'Role of cell 2' })
    .getByRole('radio', { name: 'skip' });
  await skip.focus();
  await page.keyboard.press('Space');
  await expect(skip).toBeChecked();
  await expect(page.locator('.jp-Notebook .jp-Cell').nth(1)).toHaveClass(
    /kale-ext-tag-skip/
  );
});
