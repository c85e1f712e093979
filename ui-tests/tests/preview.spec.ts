import * as fs from 'fs';

import { expect, TALL, test } from './fixtures';

test.use({ viewport: TALL });

test('the preview sums the job up, folds the YAML, copies and downloads it, and names the job that is submitted', async ({
  kale,
  page
}, testInfo) => {
  const panel = await kale.example();
  await kale.fill({
    Nodes: '2',
    'Parameter epochs': '1',
    // one CPU per node: the runtime's choice is one process per node (as
    // many as its CPUs), and two nodes fit a 2-core machine's local queue
    'CPU limit per node': '1'
  });
  await kale.compiles();

  // The summary, first.
  const preview = panel.locator('[data-section="preview"]');
  const fact = (name: string) => preview.locator(`[data-fact="${name}"]`);
  await expect(fact('shape')).toHaveText('2 nodes × 1 process');
  await expect(fact('procs-why')).toHaveText(
    /^processes per node: the runtime's choice: 1 CPU per node/
  );
  await expect(fact('backend')).toHaveText('Local: processes on this machine');
  await expect(fact('resources')).toHaveText('CPU 1');
  await expect(fact('runtime')).toContainText('torch-distributed');
  await expect(fact('packages')).toContainText('torch==');
  await expect(fact('workspace')).toContainText(/\d+ files?/);
  await expect(fact('command')).toContainText('PET_NNODES=2');
  const name = (await fact('name').textContent())!;
  expect(name).toMatch(/^digits-ddp-[a-z0-9]{5}$/);
  // The job name field shows it too.
  await expect(
    panel.getByRole('textbox', { name: 'Job name' })
  ).toHaveAttribute('placeholder', name);

  // The YAML: its bulk folded, numNodes in view.
  const yaml = panel.getByLabel('TrainJob YAML');
  await expect(yaml).toContainText('numNodes: 2');
  const folds = yaml.locator('details.kale-ext-Fold');
  await expect(folds).toHaveCount(2);
  await expect(folds.nth(0).locator('summary')).toHaveText(/^\d+ lines$/);
  await expect(folds.nth(1).locator('summary')).toHaveText(
    /^[\d,]+ characters$/
  );
  await expect(folds.nth(0)).not.toHaveAttribute('open', '');
  const whole = await yaml.evaluate(node => {
    const copy = node.cloneNode(true) as HTMLElement;
    copy.querySelectorAll('summary').forEach(s => s.remove());
    return copy.textContent ?? '';
  });
  expect(whole).toContain(`name: ${name}`);
  await kale.screenshot('panel-preview.png', preview);

  // Copy: the whole YAML, unfolded.
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await preview.getByRole('button', { name: 'Copy' }).click();
  await expect(preview.getByRole('button', { name: 'Copied' })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(whole);

  // Download: the same, as <name>.yaml.
  const downloading = page.waitForEvent('download');
  await preview.getByRole('button', { name: 'Download YAML' }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toBe(`${name}.yaml`);
  const file = testInfo.outputPath(`${name}.yaml`);
  await download.saveAs(file);
  expect(fs.readFileSync(file, 'utf-8')).toBe(whole);

  // Submit: the job gets the name the preview showed; the next one differs.
  expect(await kale.submit()).toBe(name);
  await expect(kale.row(name)).toBeVisible();
  await expect(fact('name')).not.toHaveText(name);
  await expect(fact('name')).toHaveText(/^digits-ddp-[a-z0-9]{5}$/);
});
