import { expect, test } from './fixtures';

test('kale_ext activates and shows its sidebar panel', async ({
  kale,
  page
}) => {
  const logs: string[] = [];
  page.on('console', message => {
    logs.push(message.text());
  });
  await page.reload();
  await page.waitForSelector('#jupyterlab-splash', { state: 'detached' });

  expect(logs.filter(s => s === 'kale_ext is activated')).toHaveLength(1);

  const tab = kale.tab;
  await expect(tab).toHaveCount(1);
  await expect(tab).toHaveAttribute('title', 'kale_ext: distributed training');

  const p = kale.panel;
  await expect(p).toBeHidden();
  await tab.click();
  await expect(p).toBeVisible();
  await expect(p.locator('h2')).toHaveText('Distributed training');
  await expect(p).toContainText('Open a notebook');
  await expect(p.locator('.kale-ext-Backend')).toContainText('Local');
  await expect(p.locator('[data-section="jobs"]')).toBeVisible();
  await expect(p.locator('.kale-ext-Jobs')).not.toContainText('Loading');

  await kale.screenshot('panel-empty.png', p);
});
