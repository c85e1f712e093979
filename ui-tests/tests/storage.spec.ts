import { expect, JOB_TIMEOUT, TALL, test } from './fixtures';

test.use({ viewport: TALL });

test('storage: a bad volume is named, a good one is in the preview and the TrainJob, kept across a reload; a local job shows its outputs with sizes', async ({
  kale,
  page
}) => {
  test.setTimeout(JOB_TIMEOUT + 90_000);
  // The folder that stands for the claim in a local run, beside the notebook.
  expect(await page.contents.createDirectory(kale.path('data'))).toBe(true);
  const panel = await kale.notebook('storage.ipynb', [
    { source: '# Saves a model', type: 'markdown' },
    { source: 'size = 2048', tags: ['parameters'] },
    {
      source: [
        'import os',
        'out = os.environ["KALE_EXT_OUTPUT_DIR"]',
        'assert os.path.isdir("input"), os.listdir(".")',
        'with open(os.path.join(out, "model.bin"), "wb") as f:',
        '    f.write(b"x" * size)'
      ].join('\n')
    }
  ]);
  await kale.compiles();

  // The Storage section: a volume that does not parse is named as typed, in
  // the field and in CHECKS by its label.
  await panel.locator('[data-section="storage"] > summary').click();
  await panel.getByRole('button', { name: 'Add volume' }).click();
  const volume = panel.getByRole('textbox', { name: 'Volume 1' });
  await volume.fill('nfs:data:/data');
  const checks = panel.getByRole('list', { name: 'Fields to fix' });
  await expect(checks.getByRole('button')).toHaveText(['Volume 1']);
  await expect(checks).toContainText('"nfs" is not a volume kind');
  await expect(panel.locator('[data-section="storage"]')).toContainText(
    '"nfs" is not a volume kind'
  );
  await expect(kale.submitButton).toBeDisabled();

  // On Local a claim needs the folder that stands for it.
  await volume.fill('pvc:data:input:ro');
  await expect(checks).toContainText('exists only on a cluster: add =DIR');

  // A good one: in the preview summary and the TrainJob.
  await volume.fill('pvc:data:input:ro=./data');
  await panel.getByLabel('Shared memory (/dev/shm) size').fill('1Gi');
  await kale.compiles();
  await expect(checks).toHaveCount(0);
  const summary = panel.getByLabel('What the job will be');
  await expect(summary.locator('[data-fact="volumes"]')).toContainText(
    'pvc data at /kale-ext/work/input, read-only (here: ./data)'
  );
  const yaml = panel.getByLabel('TrainJob YAML');
  await expect(yaml).toContainText('claimName: data');
  await expect(yaml).toContainText('sizeLimit: 1Gi');

  // The workspace: files, size, excluded, and the list behind a disclosure.
  const workspace = summary.locator('[data-fact="workspace"]');
  await expect(workspace).toContainText(/\d+ files?, .* \(at most 10 MiB\)/);
  await workspace.getByText(/^List the \d+ files?$/).click();
  await expect(
    workspace.getByRole('list', { name: 'Workspace files' })
  ).toContainText('storage.ipynb');
  await kale.panelScreenshot('panel-storage.png');

  // Kept in the notebook: a reload reads it back.
  await page.notebook.save();
  await kale.reload();
  // (open it again if the restored layout does not hold it)
  await page.evaluate(async path => {
    // (the widget it opens is not sent back: it cannot be serialized)
    await window.jupyterapp.commands.execute('docmanager:open', { path });
  }, kale.path('storage.ipynb'));
  await expect(
    page.locator('.jp-NotebookPanel:not(.lm-mod-hidden)')
  ).toBeVisible();
  const again = await kale.openPanel();
  await again.locator('[data-section="storage"] > summary').click();
  await expect(again.getByRole('textbox', { name: 'Volume 1' })).toHaveValue(
    'pvc:data:input:ro=./data'
  );
  await expect(again.getByLabel('Shared memory (/dev/shm) size')).toHaveValue(
    '1Gi'
  );

  // A local job that writes outputs shows them with their sizes.
  await kale.compiles();
  const name = await kale.submit();
  const row = kale.row(name);
  await kale.waitForStatus(name, 'Complete', JOB_TIMEOUT);
  await row.getByText('Outputs', { exact: true }).click();
  const files = row.getByRole('list', { name: 'Output files' });
  await expect(files).toContainText('model.bin 2 KiB');
  await expect(row.locator('.kale-ext-JobOutputs > summary')).toHaveText(
    'Outputs (1)'
  );
  await kale.screenshot('panel-job-outputs.png', row, false);

  // Deleting a local job talks of processes, and keeps the outputs.
  await kale.deleteJob(name, async dialog => {
    await expect(dialog).toContainText('processes');
    await expect(dialog).toContainText('outputs stay');
    await expect(dialog).not.toContainText('pods');
  });
});
