import { expect, test } from '@jupyterlab/galata';

/**
 * Don't load JupyterLab before the test starts, so that every console
 * message of the page load is captured.
 */
test.use({ autoGoto: false });

test('kale_ext activates and shows its sidebar panel', async ({
  page
}, testInfo) => {
  const logs: string[] = [];
  page.on('console', message => {
    logs.push(message.text());
  });

  await page.goto();

  expect(logs.filter(s => s === 'kale_ext is activated')).toHaveLength(1);

  const tab = page.locator(
    '.jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id="kale-ext-panel"]'
  );
  await expect(tab).toHaveCount(1);
  await expect(tab).toHaveAttribute('title', 'kale_ext: distributed training');

  const panel = page.locator('#kale-ext-panel');
  await expect(panel).toBeHidden();
  await tab.click();
  await expect(panel).toBeVisible();
  await expect(panel.locator('h2')).toHaveText('kale_ext');
  await expect(panel).toContainText('coming soon');

  await page.screenshot({ path: testInfo.outputPath('kale-ext-panel.png') });
});
