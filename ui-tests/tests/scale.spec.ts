import * as fs from 'fs';

import { expect, test, unnamedControls } from './fixtures';
import { manyJobs, serveJobs, serveLongLog } from './synthetic';

/**
 * The panel and the logs view with many jobs and long logs: what they show
 * and do. How fast: `benchmarks/panel` (a benchmark, not a test).
 */
const LOG_LINES = 50_000;

test.describe('at scale', () => {
  test('the panel lists 200 jobs', async ({ kale, page }) => {
    await serveJobs(page, manyJobs(200));
    await kale.tab.click();
    const panel = await kale.openPanel();
    const rows = panel.locator('.kale-ext-JobRow');
    await expect(rows).toHaveCount(200);
    await expect(panel.locator('.kale-ext-Count')).toHaveText('200');
    await expect(rows.first()).toHaveAttribute('data-job', 'job-000');
    await expect(rows.last()).toHaveAttribute('data-job', 'job-199');
  });

  test('the logs view shows, searches and downloads 50,000 lines', async ({
    kale,
    page
  }, testInfo) => {
    const name = 'perf-logs';
    await serveLongLog(page, name, LOG_LINES);
    await kale.openPanel();
    const logs = await kale.openLogs(name);
    const status = logs.locator('.kale-ext-LogsStatus');
    await expect(status).toContainText('50,000 lines', { timeout: 30_000 });
    await expect(status).toContainText('Ended: Complete');

    expect(await unnamedControls(logs.locator('.kale-ext-LogsView'))).toEqual(
      []
    );

    // Virtualized: the DOM holds a few dozen rows, not 50,000.
    const list = logs.getByRole('log');
    expect(await list.locator('.kale-ext-LogLine').count()).toBeLessThan(200);
    await expect(list).toContainText(`line ${LOG_LINES - 1}`); // followed to the end
    await list.evaluate(node => (node.scrollTop = 0));
    await expect(list.locator('.kale-ext-LogLine').first()).toContainText(
      'line 0'
    );

    // Search all 50,000 lines.
    const search = logs.getByLabel('Search the logs');
    await search.fill('line 49999');
    await expect(status).toContainText('1 of 50,000 lines');
    await expect(list.locator('mark')).toHaveText('line 49999');
    await search.fill('');
    await expect(status).toContainText('50,000 lines');

    // Download what the filter shows: node 1's 25,000 lines.
    await logs.getByRole('tab', { name: 'Node 1' }).click();
    await expect(status).toContainText('25,000 of 50,000 lines');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      logs.getByRole('button', { name: 'Download' }).click()
    ]);
    expect(download.suggestedFilename()).toBe(`${name}-node1.log`);
    const file = testInfo.outputPath(download.suggestedFilename());
    await download.saveAs(file);
    const text = fs.readFileSync(file, 'utf-8');
    expect(text.split('\n').filter(Boolean)).toHaveLength(LOG_LINES / 2);
    expect(text).toContain(`line ${LOG_LINES - 1}\n`);
    expect(text).not.toContain('[rank 0]');
    await logs.getByRole('tab', { name: 'All nodes' }).click();
    await expect(status).toContainText('50,000 lines');
    await kale.screenshot('logs-50k.png', logs, false);
  });
});
