import * as fs from 'fs';

import {
  expect,
  JOB_TIMEOUT,
  test,
  timelineFootProblems,
  unnamedControls
} from './fixtures';

test.use({ viewport: { width: 1280, height: 900 } });

/**
 * A job that reports as the example does (the loss every epoch, the test
 * accuracy at the end, on each rank) without training (the example's real
 * training is panel.spec's): it ends once `gate` exists (the test makes
 * it once it has seen the nodes running).
 */
function reporting(gate: string): string {
  return [
    'import os',
    'import time',
    'from kale_ext import report',
    '',
    'rank = int(os.environ.get("RANK", 0))',
    'for epoch in range(1, epochs + 1):',
    '    loss = round(2.3 / (epoch + rank / 10), 4)',
    '    print(f"epoch {epoch} loss {loss}")',
    '    report(step=epoch, loss=loss)',
    'accuracy = 0.9 + rank / 100',
    'print(f"test accuracy {accuracy:.3f}")',
    'report(step=epochs, accuracy=accuracy)',
    'for _ in range(6000):  # at most 10 min',
    `    if os.path.exists(${JSON.stringify(gate)}):`,
    '        break',
    '    time.sleep(0.1)'
  ].join('\n');
}

test('the logs view plots the metrics a 2-node job reports, and its timeline', async ({
  kale,
  page
}, testInfo) => {
  const gate = testInfo.outputPath('gate');
  fs.rmSync(gate, { force: true });
  const panel = await kale.notebook(
    'metrics.ipynb',
    [
      { source: 'epochs = 6', tags: ['parameters'] },
      { source: reporting(gate) }
    ],
    { settle: true, timeout: JOB_TIMEOUT + 60_000 }
  );

  // On 2 nodes, 2 epochs: each rank reports the loss every epoch and the
  // test accuracy at the end.
  await panel
    .getByLabel('Runtime', { exact: true })
    .selectOption('torch-distributed');
  await kale.fill({ Nodes: '2', 'Parameter epochs': '2' });
  await kale.compiles();
  await expect(kale.submitButton).toBeEnabled();
  const name = await kale.submit();
  const logs = await kale.openLogs(name);

  // The timeline starts with the first poll of the job's status.
  const timeline = logs.locator('[data-section="timeline"]');
  await expect(timeline.getByRole('img', { name: /^node 0: / })).toBeVisible();
  await expect(timeline.getByRole('img', { name: /^node 1: / })).toBeVisible();

  // The loss: one chart, a line per rank, the latest values in its name.
  const metrics = logs.locator('[data-section="metrics"]');
  const loss = metrics.locator('[data-metric="loss"]');
  const lossChart = loss.getByRole('img');
  await expect(lossChart).toHaveAttribute(
    'aria-label',
    /^loss, latest: rank 0 [\d.]+ at step 2, rank 1 [\d.]+ at step 2$/,
    { timeout: JOB_TIMEOUT }
  );
  // A line per rank and their mean; the legend has each one's last and best.
  const series = loss.locator('.kale-ext-Metric-series');
  await expect(series).toHaveCount(3);
  await expect(series.nth(0)).toHaveAttribute('data-rank', '0');
  await expect(series.nth(1)).toHaveAttribute('data-rank', '1');
  await expect(series.nth(2)).toHaveAttribute('data-rank', 'mean');
  await expect(series.locator('path')).toHaveCount(3); // 2 steps: a line each
  await expect(loss.locator('.kale-ext-Metric-legend li')).toHaveText([
    /^rank 0\s*last [\d.]+ step 2\s*best [\d.]+ step [12]$/,
    /^rank 1\s*last [\d.]+ step 2\s*best [\d.]+ step [12]$/,
    /^mean\s*last [\d.]+ step 2\s*best [\d.]+ step [12]$/
  ]);

  // The chart fills the view's width.
  const section = await metrics.boundingBox();
  const box = (await lossChart.boundingBox())!;
  expect(box.width).toBeGreaterThan(0.9 * section!.width);

  // Hover: a crosshair and each rank's value at the step under the pointer.
  const tip = loss.locator('.kale-ext-Metric-tooltip');
  await expect(tip).toBeHidden();
  await lossChart.hover({ position: { x: box.width - 20, y: box.height / 2 } });
  await expect(tip).toBeVisible();
  await expect(tip).toContainText(
    /step 2: rank 0 [\d.]+, rank 1 [\d.]+, mean [\d.]+/
  );
  await expect(loss.locator('.kale-ext-Metric-crosshair circle')).toHaveCount(
    3
  );
  await kale.screenshot('metrics-hover.png', logs);
  await page.mouse.move(0, 0);
  await expect(tip).toBeHidden();
  // The keyboard too: focus shows the last step, the arrows move.
  await lossChart.focus();
  await expect(tip).toContainText(/step 2: rank 0/);
  await page.keyboard.press('ArrowLeft');
  await expect(tip).toContainText(/step 1: rank 0 [\d.]+, rank 1 [\d.]+/);
  await page.keyboard.press('Escape');
  await expect(tip).toBeHidden();

  // A log scale: the line redrawn on a log axis.
  const rank0 = series.nth(0).locator('path');
  const linear = await rank0.getAttribute('d');
  const log = loss.getByRole('button', { name: 'Log scale of loss' });
  await log.click();
  await expect(log).toHaveAttribute('aria-pressed', 'true');
  await expect(loss).toHaveAttribute('data-scale', 'log');
  await expect(rank0).not.toHaveAttribute('d', linear!);
  await kale.screenshot('metrics-log.png', logs);
  await log.click();
  await expect(loss).toHaveAttribute('data-scale', 'linear');

  // Taller charts, on demand.
  const height = box.height;
  await logs.getByRole('button', { name: 'Taller charts' }).click();
  await expect
    .poll(async () => (await lossChart.boundingBox())!.height)
    .toBeGreaterThan(1.5 * height);
  // Taller charts take more of the view, the timeline keeps its height: its
  // legend stays whole, above the log lines (it was cut, under them).
  expect(await timelineFootProblems(logs)).toEqual([]);
  // (the metrics from their top: focusing the chart above scrolled them)
  await metrics.evaluate(el => (el.scrollTop = 0));
  await kale.screenshot('metrics-tall.png', logs);
  await logs.getByRole('button', { name: 'Taller charts' }).click();

  // The accuracy, reported once per rank at the end: a number, at its step.
  const accuracy = metrics.locator('[data-metric="accuracy"]');
  await expect(accuracy.locator('.kale-ext-MetricValue-main')).toHaveText(
    /^0\.\d+ at step 2 · mean of 2 ranks$/,
    { timeout: JOB_TIMEOUT }
  );
  await expect(accuracy.locator('svg')).toHaveCount(0);
  const values = accuracy.locator('.kale-ext-Metric-value');
  await expect(values).toHaveCount(2);
  for (const value of await values.allTextContents()) {
    expect(Number(value)).toBeGreaterThan(0.5);
    expect(Number(value)).toBeLessThanOrEqual(1);
  }

  // The job ends: every node's bar ends done, after some time running.
  fs.writeFileSync(gate, '');
  await expect(logs.locator('.kale-ext-LogsStatus')).toContainText(
    'Ended: Complete',
    { timeout: JOB_TIMEOUT }
  );
  for (const node of [0, 1]) {
    await expect(
      timeline.getByRole('img', { name: new RegExp(`^node ${node}: `) })
    ).toHaveAttribute('aria-label', /running [\d.]+(s|m \d+s), done$/);
  }

  // The raw KALE_METRIC lines are out of the log, until asked for.
  const lines = logs.getByRole('log');
  await expect(lines).toContainText('test accuracy');
  await expect(lines).not.toContainText('KALE_METRIC');
  // 2 ranks × (2 loss lines + 1 accuracy line), not counted while hidden.
  const toggle = logs.getByRole('button', { name: 'Metric lines (6)' });
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  const status = logs.locator('.kale-ext-LogsStatus');
  const shown = Number(/(\d+) lines/.exec((await status.textContent())!)![1]);
  const search = logs.getByLabel('Search the logs');
  await search.fill('KALE_METRIC');
  await expect(status).toContainText(`0 of ${shown} lines`);
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await expect(status).toContainText(`6 of ${shown + 6} lines`);
  await expect(lines).toContainText('KALE_METRIC {"step": 2, "rank": 1');
  await toggle.click();
  await search.fill('');
  await expect(status).toContainText(`Ended: Complete · ${shown} lines`);
  await expect(lines).toContainText('test accuracy');
  await expect(lines).not.toContainText('KALE_METRIC');

  expect(await unnamedControls(logs.locator('.kale-ext-LogsView'))).toEqual([]);
  await page.mouse.move(0, 0); // no hover effect in the screenshot
  // At this narrow width the charts stack: the metrics scroll, the timeline
  // stays in view, whole (it was scrolled out of the insights).
  await expect(
    timeline.getByRole('img', { name: /^node 1: / })
  ).toBeInViewport();
  expect(await timelineFootProblems(logs)).toEqual([]);
  await metrics.evaluate(el => (el.scrollTop = 0));
  await kale.screenshot('metrics.png', logs);

  // The dark theme: the charts follow the theme's colours.
  await page.theme.setDarkTheme();
  await kale.screenshot('metrics-dark.png', logs);
  await page.theme.setLightTheme();
});

const REPORTING = [
  '%%trainjob --backend local --nodes 2 --name metrics-widget',
  'import os',
  'from kale_ext import report',
  '',
  'rank = int(os.environ.get("RANK", 0))',
  'for step in range(1, 4):',
  '    print(f"step {step}")',
  '    report(step=step, loss=round(1 / step + rank / 10, 4))',
  'report(step=3, accuracy=0.9 + rank / 100)'
].join('\n');

test('the notebook monitor widget plots the metrics too', async ({ kale }) => {
  test.setTimeout(JOB_TIMEOUT + 60_000);
  const monitor = await kale.magicJob('metrics.ipynb', REPORTING);
  const loss = monitor.locator('[data-metric="loss"]');
  await expect(loss.getByRole('img')).toHaveAttribute(
    'aria-label',
    'loss, latest: rank 0 0.3333 at step 3, rank 1 0.4333 at step 3'
  );
  await expect(loss.locator('path')).toHaveCount(3); // each rank and their mean
  await expect(loss).toContainText(
    'mean last 0.3833 step 3 · best 0.3833 step 3'
  );
  const accuracy = monitor.locator('[data-metric="accuracy"]');
  await expect(accuracy.getByRole('img')).toHaveAttribute(
    'aria-label',
    'accuracy, latest: rank 0 0.9 at step 3, rank 1 0.91 at step 3'
  );
  // reported once: a number, not a chart
  await expect(accuracy).toContainText('0.905 at step 3 · mean of 2 ranks');
  await expect(accuracy.locator('svg')).toHaveCount(0);
  // a log scale
  await expect(loss.locator('svg')).toHaveAttribute('data-scale', 'linear');
  await monitor.getByRole('button', { name: 'Log scale' }).click();
  await expect(loss.locator('svg')).toHaveAttribute('data-scale', 'log');
  // The lines report() printed are plotted, not listed.
  const all = monitor.locator('.kale-ext-log');
  await expect(all).toContainText('[rank 1] step 3');
  await expect(all).not.toContainText('KALE_METRIC');
  await kale.screenshot('metrics-widget.png', monitor);

  await kale.magicDelete('metrics-widget');
});
