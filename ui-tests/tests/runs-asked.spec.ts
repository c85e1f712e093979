import * as path from 'path';

import {
  expect,
  galata,
  IJupyterLabPageFixture,
  KaleUI,
  SCREENSHOTS,
  TALL,
  test
} from './fixtures';

/**
 * What runs is what was asked (issue 26), in the panel: a sweep runs every
 * value the form shows, a reload restores the form as last shown (and says
 * what differs from the notebook on disk), Stop keeps a job reading
 * Stopped, Rerun runs the job as recorded and says at its row why it
 * cannot, Edit and rerun loads a job's options into the form.
 *
 * Each job waits until the test creates its `go-<lr>` file in the mounted
 * folder: the test decides when a trial ends, with no sleeps.
 */

/** Jobs really run here (the local backend): give them time. */
const JOB_TIMEOUT = 120_000;

test.use({
  viewport: { width: 1400, height: 1000 },
  // the notebook on disk stays as it was opened: what a reload finds is
  // the last save, not the form (JupyterLab autosaves every 2 minutes)
  mockSettings: {
    ...galata.DEFAULT_SETTINGS,
    '@jupyterlab/docmanager-extension:plugin': { autosave: false }
  }
});

/** The notebook: `epochs` and `lr` parameters; a step that waits its go. */
function cells(mount: string) {
  return [
    { source: 'epochs = 6\nlr = 0.1', tags: ['parameters'] },
    {
      source: [
        'import os, time',
        'print(f"epoch 1/{epochs} lr {lr}", flush=True)',
        `go = os.path.join(${JSON.stringify(mount)}, f"go-{lr}")`,
        'while not os.path.exists(go):',
        '    time.sleep(0.05)',
        'print(f"trained {epochs} epochs", flush=True)'
      ].join('\n')
    }
  ];
}

/** A mount path no other test run holds (local mounts are machine-wide). */
function uniqueMount(): string {
  return `/tmp/kale-ui-${process.pid}-${Date.now().toString(36)}`;
}

/** The notebook `name` with the panel, and a `data` folder beside it. */
async function setUp(kale: KaleUI, name: string) {
  const mount = uniqueMount();
  expect(await kale.page.contents.createDirectory(kale.path('data'))).toBe(
    true
  );
  const p = await kale.notebook(name, cells(mount), { settle: true });
  await expect(p.locator('.kale-ext-Notebook')).toContainText(name);
  await kale.widen(300);
  return { p, mount, volume: `pvc:data:${mount}=./data` };
}

/** Let the jobs of this `lr` end (they wait for this file). */
async function go(kale: KaleUI, lr: string): Promise<void> {
  const file = kale.path(`data/go-${lr}`);
  expect(await kale.page.contents.uploadContent('', 'text', file)).toBe(true);
}

/** What the job printed, every node (the REST log stream, not followed). */
async function logText(
  page: IJupyterLabPageFixture,
  name: string
): Promise<string[]> {
  const response = await page.request.get(`kale-ext/jobs/${name}/logs`);
  expect(response.status()).toBe(200);
  return (await response.text())
    .split('\n')
    .filter(line => line.startsWith('data: '))
    .map(line => JSON.parse(line.slice(6)))
    .filter(data => typeof data.text === 'string')
    .map(data => data.text as string);
}

async function sweepOf(page: IJupyterLabPageFixture, name: string) {
  const response = await page.request.get(`kale-ext/sweeps/${name}`);
  expect(response.status()).toBe(200);
  return response.json();
}

test('a sweep with epochs set and a volume, two at a time, through a reload, a Stop and a Rerun: every trial and the rerun print the epochs set', async ({
  page,
  kale
}) => {
  test.setTimeout(6 * JOB_TIMEOUT);
  const { p, mount, volume } = await setUp(kale, 'asked.ipynb');
  await kale.fill({ 'Parameter epochs': '4' });
  await p.getByRole('button', { name: 'Sweep lr' }).click();
  await kale.fill({
    'Sweep values of lr': '0.1, 0.2, 0.3',
    'Trials at once': '2'
  });
  await p.locator('[data-section="storage"] > summary').click();
  await p.getByRole('button', { name: 'Add volume' }).click();
  const keptAll = kale.kept(mount);
  await kale.fill({ 'Volume 1': volume });
  await keptAll;

  const response = await kale.startSweep();
  expect(response.status(), await response.text()).toBe(201);
  const sweep = (await response.json()).name as string;
  // two trials at once, both mounting the same folder at the same path
  await expect
    .poll(async () => (await sweepOf(page, sweep)).counts.running, {
      timeout: JOB_TIMEOUT
    })
    .toBe(2);

  // Reload mid-sweep: the form comes back as last shown, and says so.
  await kale.reloadLeaving();
  const again = await kale.openPanel();
  const note = kale.restoredNote;
  await expect(note).toBeVisible({ timeout: 30_000 });
  for (const line of [
    'parameter epochs: 4 (the notebook: none)',
    `volumes: ${volume} (the notebook: none)`,
    'sweep of lr: 0.1, 0.2, 0.3 (the notebook: none)',
    'trials at a time: 2 (the notebook: 1)'
  ]) {
    await expect(note.locator('li', { hasText: line })).toHaveCount(1);
  }
  const storage = again.locator('[data-section="storage"]');
  await expect(storage).toHaveAttribute('open', '');
  await expect(storage.locator('summary')).toContainText('restored');
  await expect(again.getByLabel('Volume 1', { exact: true })).toHaveValue(
    volume
  );
  await expect(again.getByLabel('Sweep values of lr')).toHaveValue(
    '0.1, 0.2, 0.3'
  );
  await kale.panelScreenshot('panel-restored.png');

  // The trials: epochs=4 reached each one (its logs say so).
  const trials = (await sweepOf(page, sweep)).trials as {
    job: string;
    parameters: { lr: number };
    status: string;
  }[];
  const trialOf = (lr: number) => trials.find(t => t.parameters.lr === lr)!;
  const [first, second] = [trialOf(0.1).job, trialOf(0.2).job];
  const logs = await kale.openLogs(first);
  await expect(logs.locator('.kale-ext-LogLine-text').first()).toHaveText(
    'epoch 1/4 lr 0.1',
    { timeout: JOB_TIMEOUT }
  );
  await kale.screenshot('sweep-trial-logs.png');

  // Stop one trial: kept, reading Stopped, by whom and when.
  await kale.openPanel();
  await kale
    .row(first)
    .getByRole('button', { name: `Stop ${first}` })
    .click();
  await expect(kale.row(first).locator('.kale-ext-Status')).toHaveText(
    'Stopped',
    { timeout: JOB_TIMEOUT }
  );
  await expect(kale.row(first).locator('.kale-ext-JobRow-reason')).toHaveText(
    /stopped by \S+ at /
  );
  await kale.screenshot('panel-stopped.png', kale.row(first));

  // The others end; the sweep's tally counts each outcome.
  await go(kale, '0.2');
  await go(kale, '0.3');
  await expect
    .poll(async () => (await sweepOf(page, sweep)).tally, {
      timeout: 2 * JOB_TIMEOUT
    })
    .toBe('2 of 3 complete; 1 stopped');
  await again
    .getByRole('button', { name: `Sweep ${sweep} of ${second}` })
    .click();
  const view = page.locator(`.kale-ext-SweepView[data-sweep="${sweep}"]`);
  await expect(view.locator('.kale-ext-SweepView-progress')).toContainText(
    '2 of 3 complete; 1 stopped'
  );
  await expect(view.locator('tbody tr[data-status="Stopped"]')).toHaveCount(1);
  await kale.screenshot('sweep-tally.png');

  // Rerun a trial: the job as recorded (epochs=4, lr 0.2, the volume),
  // not the form, under a new name.
  await kale.openPanel();
  const rerun = page.waitForResponse(
    r =>
      r.url().includes(`/kale-ext/jobs/${second}/rerun`) &&
      r.request().method() === 'POST'
  );
  await kale
    .row(second)
    .getByRole('button', { name: `Rerun ${second}`, exact: true })
    .click();
  const rerunReply = await rerun;
  expect(rerunReply.status(), await rerunReply.text()).toBe(201);
  const third = (await rerunReply.json()).name as string;
  await kale.waitForStatus(third, 'Complete', JOB_TIMEOUT);

  // Every trial, and the rerun, ran with epochs=4.
  const ended = (await sweepOf(page, sweep)).trials as typeof trials;
  expect(ended).toHaveLength(3);
  const printed: Record<string, string[]> = {};
  for (const job of [...ended.map(t => t.job), third]) {
    printed[job] = await logText(page, job);
  }
  // (the stopped one printed its first line, then the stop: no traceback)
  expect(printed[first][0]).toBe('epoch 1/4 lr 0.1');
  expect(printed[first].join('\n')).not.toContain('Traceback');
  delete printed[first];
  expect(printed).toEqual({
    [second]: ['epoch 1/4 lr 0.2', 'trained 4 epochs'],
    [ended.find(t => t.parameters.lr === 0.3)!.job]: [
      'epoch 1/4 lr 0.3',
      'trained 4 epochs'
    ],
    [third]: ['epoch 1/4 lr 0.2', 'trained 4 epochs']
  });
});

test('Rerun says at its row why the recorded job cannot run; Edit and rerun loads its options into the form', async ({
  page,
  kale,
  consoleErrors
}) => {
  test.setTimeout(3 * JOB_TIMEOUT);
  const { p, volume } = await setUp(kale, 'edit.ipynb');
  await go(kale, '0.1');
  await kale.fill({ 'Parameter epochs': '3' });
  await p.locator('[data-section="storage"] > summary').click();
  await p.getByRole('button', { name: 'Add volume' }).click();
  await kale.fill({ 'Volume 1': volume });
  const submitted = page.waitForResponse(
    r =>
      /\/kale-ext\/jobs(\?.*)?$/.test(r.url()) &&
      r.request().method() === 'POST'
  );
  await kale.submitButton.click();
  const job = (await (await submitted).json()).name as string;
  await kale.waitForStatus(job, 'Complete', JOB_TIMEOUT);
  expect(await logText(page, job)).toEqual([
    'epoch 1/3 lr 0.1',
    'trained 3 epochs'
  ]);

  // The folder the job mounted is gone: its Rerun is refused, at its row.
  expect(await page.contents.deleteDirectory(kale.path('data'))).toBe(true);
  const before = consoleErrors.length;
  const refused = page.waitForResponse(
    r => r.url().includes(`/kale-ext/jobs/${job}/rerun`) && r.status() === 400
  );
  await kale
    .row(job)
    .getByRole('button', { name: `Rerun ${job}`, exact: true })
    .click();
  const message = kale.row(job).locator('.kale-ext-JobRow-message');
  await expect(message).toContainText('does not exist');
  await expect(message).toContainText('data');
  await refused;
  // Chromium logs the refusal (a 400) as a console error: only that one
  const bad = /the server responded with a status of 400/;
  const after = consoleErrors.splice(before);
  expect(after.filter(e => bad.test(e))).toHaveLength(1);
  consoleErrors.push(...after.filter(e => !bad.test(e)));
  await kale.screenshot('panel-rerun-error.png', kale.row(job));

  // Edit and rerun: the job's options replace the form's.
  await kale.fill({ 'Parameter epochs': '5' });
  await p.getByRole('button', { name: 'Remove volume 1' }).click();
  await expect(p.getByLabel('Volume 1', { exact: true })).toHaveCount(0);
  await kale
    .row(job)
    .getByRole('button', { name: `Edit and rerun ${job}` })
    .click();
  await expect(p.getByLabel('Parameter epochs', { exact: true })).toHaveValue(
    '3'
  );
  await expect(p.getByLabel('Volume 1', { exact: true })).toHaveValue(volume);
  await expect(kale.row(job).locator('.kale-ext-JobRow-message')).toContainText(
    'Its options are in the form'
  );
  // the form as loaded (epochs and the volume), and the row that says so
  await page.setViewportSize(TALL);
  const parameters = p.locator('[data-section="parameters"]');
  const storage = p.locator('[data-section="storage"]');
  // Parameters at the top of the panel's scrolling area (Edit and rerun,
  // clicked at the row below, left them above it, under the menu bar):
  // storage, right below, is then in view too.
  await parameters.evaluate(node => {
    let area = node.parentElement;
    while (area && area.scrollHeight <= area.clientHeight) {
      area = area.parentElement;
    }
    if (area) {
      area.scrollTop +=
        node.getBoundingClientRect().top - area.getBoundingClientRect().top;
    }
  });
  const [top, bottom] = [
    (await parameters.boundingBox())!,
    (await storage.boundingBox())!
  ];
  await page.screenshot({
    path: path.join(SCREENSHOTS, 'panel-edit-rerun.png'),
    clip: {
      x: top.x,
      y: top.y,
      width: top.width,
      height: bottom.y + bottom.height - top.y
    },
    animations: 'disabled'
  });
  await kale.screenshot('panel-edit-rerun-row.png', kale.row(job));
});
