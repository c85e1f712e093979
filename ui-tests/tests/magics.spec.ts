import { expect, openNotebook, test } from './helpers';

/**
 * The job really runs (the local backend, two processes with torch.distributed):
 * give it time.
 */
const JOB_TIMEOUT = 180_000;

const TRAINJOB = [
  '%%trainjob --backend local --nodes 2 --name magics-ranks',
  'import torch.distributed as dist',
  '',
  "dist.init_process_group('gloo')",
  'print(f"hello from rank {dist.get_rank()} of {dist.get_world_size()}")',
  'dist.destroy_process_group()'
].join('\n');

test('%%trainjob runs a 2-node job and its monitor widget shows both ranks', async ({
  page,
  tmpPath
}, testInfo) => {
  test.setTimeout(JOB_TIMEOUT + 60_000);
  await openNotebook(page, testInfo, tmpPath, 'magics.ipynb', [
    { source: '%load_ext kale_ext' },
    { source: TRAINJOB },
    { source: '%kale_delete magics-ranks --backend local' }
  ]);

  await page.notebook.runCell(0, true);
  // The magic returns at once: the monitor polls from a background thread.
  await page.notebook.runCell(1, true);

  const monitor = page.locator('.kale-ext-monitor');
  await expect(monitor).toBeVisible({ timeout: 60_000 });
  await expect(monitor).toContainText('magics-ranks');
  await expect(monitor.locator('.kale-ext-status')).toHaveText('Complete', {
    timeout: JOB_TIMEOUT
  });

  // Both ranks' output, rank-prefixed, in the "all nodes" tab ...
  const all = monitor.locator('.kale-ext-log');
  await expect(all).toContainText('[rank 0] hello from rank 0 of 2');
  await expect(all).toContainText('[rank 1] hello from rank 1 of 2');
  // ... and each node's in its own.
  await monitor.getByRole('tab', { name: 'node 1' }).click();
  const node1 = monitor.locator('.kale-ext-log-node-1');
  await expect(node1).toBeVisible();
  await expect(node1).toContainText('[rank 1] hello from rank 1 of 2');
  await expect(node1).not.toContainText('[rank 0]');

  // A finished job cannot be cancelled; the elapsed time stays.
  await expect(monitor.locator('button.kale-ext-cancel')).toBeDisabled();
  await expect(monitor.locator('.kale-ext-elapsed')).toHaveText(/^\d+:\d\d$/);

  // Clean up through the magic.
  await page.notebook.runCell(2, true);
  expect(await page.notebook.getCellTextOutput(2)).toEqual([
    'deleted magics-ranks\n'
  ]);
});
