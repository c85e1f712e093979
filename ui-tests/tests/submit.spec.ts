import { expect, JOB_TIMEOUT, test } from './fixtures';

// A window of an ordinary height: the form is longer than the panel.
test.use({ viewport: { width: 1280, height: 720 } });

test('Submit is always in view; after it the logs open, the row comes into view, and the row, the bar and the logs agree on the status', async ({
  kale
}) => {
  // The example's parameters, in a notebook that only prints them.
  const panel = await kale.parameters(
    'submit.ipynb',
    'lr = 0.05\nepochs = 6\nbatch_size = 64\nhidden = 64\nseed = 0',
    { settle: true, timeout: JOB_TIMEOUT + 60_000 }
  );
  await kale.fill({ 'Parameter epochs': '1' });

  // The form scrolls; Submit stays in view at the top and at the bottom.
  const submit = kale.submitButton;
  await expect(submit).toBeEnabled();
  const scroller = kale.panel;
  const scrollable = await scroller.evaluate(
    node => node.scrollHeight > node.clientHeight
  );
  expect(scrollable).toBe(true);
  for (const top of [0, 1e6]) {
    await scroller.evaluate((node, y) => (node.scrollTop = y), top);
    await expect(submit).toBeInViewport({ ratio: 1 });
  }
  await scroller.evaluate(node => (node.scrollTop = 0));

  const previewed = await panel.locator('[data-fact="name"]').textContent();
  const name = await kale.submit();
  expect(name).toBe(previewed);

  // The logs open by themselves, the row comes into view.
  const logs = kale.logs(name);
  await expect(logs).toBeVisible();
  const row = kale.row(name);
  await expect(row).toBeInViewport();
  const current = panel.locator(`.kale-ext-CurrentJob[data-job="${name}"]`);
  await expect(current).toBeInViewport();
  await expect(
    logs.getByRole('log').locator('.kale-ext-LogLine').first()
  ).toBeVisible({ timeout: JOB_TIMEOUT });
  await kale.screenshot('panel-submitted.png');

  // One status: when the logs say it ended, the row and the bar say so.
  await expect(logs.locator('.kale-ext-LogsStatus')).toContainText(
    'Ended: Complete',
    { timeout: JOB_TIMEOUT }
  );
  await expect(row).toHaveAttribute('data-status', 'Complete');
  await expect(current).toHaveAttribute('data-status', 'Complete');
  await expect(current.getByRole('status')).toHaveText('Complete');
});
