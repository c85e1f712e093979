import { expect, JOB_TIMEOUT, test } from './fixtures';

const TRAINJOB = [
  '%%trainjob --backend local --nodes 2 --name magics-ranks',
  'import torch.distributed as dist',
  '',
  "dist.init_process_group('gloo')",
  'print(f"hello from rank {dist.get_rank()} of {dist.get_world_size()}")',
  'dist.barrier()  # no rank leaves before the other has joined',
  'dist.destroy_process_group()'
].join('\n');

test('%%trainjob runs a 2-node job and its monitor widget shows both ranks', async ({
  kale
}) => {
  test.setTimeout(JOB_TIMEOUT + 60_000);
  const monitor = await kale.magicJob('magics.ipynb', TRAINJOB);

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
  await kale.magicDelete('magics-ranks');
});
