/**
 * The one place the browser tests' steps are written (no tests here): the
 * `test` they use, with its `kale` fixture (open a notebook, open the panel,
 * submit, wait for a status, read the jobs table, open logs, delete a job),
 * and the screenshots for the docs.
 */
import {
  expect,
  galata,
  IJupyterLabPageFixture,
  test as base
} from '@jupyterlab/galata';
import type {
  ConsoleMessage,
  Locator,
  Response,
  TestInfo
} from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

/**
 * Where the screenshots for the documentation go: an ignored folder
 * (ui-tests/screenshots), so a test run leaves the tree as it was; `make
 * screenshots` sets KALE_EXT_SCREENSHOTS_DIR to docs/screenshots, the
 * committed ones the README shows.
 */
export const SCREENSHOTS = path.resolve(
  process.env.KALE_EXT_SCREENSHOTS_DIR ||
    path.resolve(__dirname, '..', 'screenshots')
);

/**
 * How long a test waits for a job that really runs here (the local backend,
 * a few processes on a busy machine) to reach a status.
 */
export const JOB_TIMEOUT = 180_000;

/**
 * The repository's examples.
 */
export const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');

/**
 * Galata's test, with the page loaded after a console listener is attached:
 * every browser console error and uncaught exception of a test (page load
 * included) fails it; and `kale`, what a user does with the panel, bound to
 * the test's page, server folder and artifacts.
 */
export const test = base.extend<{ consoleErrors: string[]; kale: KaleUI }>({
  kale: async ({ page, tmpPath }, use, testInfo) => {
    await use(new KaleUI(page, tmpPath, testInfo));
  },
  autoGoto: false,
  consoleErrors: [
    async ({ page }, use, testInfo) => {
      const errors: string[] = [];
      const othersJobs: string[] = []; // URLs: see deletedElsewhere
      page.on('console', message => {
        if (message.type() === 'error' && !kernelListRace(message)) {
          // where from: "Failed to load resource" does not say which
          const { url } = message.location();
          errors.push(url ? `${message.text()} (${url})` : message.text());
          if (url && message.text().includes('status of 404')) {
            othersJobs.push(url);
          }
        }
      });
      page.on('pageerror', error => errors.push(`uncaught: ${error.message}`));
      await page.goto();
      await use(errors);
      const skipped = deletedElsewhere(othersJobs, testInfo);
      expect(
        errors.filter(e => !skipped.some(url => e.endsWith(`(${url})`))),
        'errors in the browser console'
      ).toEqual([]);
    },
    { auto: true }
  ]
});

/**
 * Where the tests note the jobs they delete (one line each, `name<TAB>test
 * id`), read by every test: the two browser workers share one server, so a
 * page lists the other test's jobs too.
 */
function deletionsFile(testInfo: TestInfo): string {
  return path.join(testInfo.project.outputDir, 'deleted-jobs.tsv');
}

/**
 * Note that this test deletes job `name`, before it does.
 */
export function noteDeletion(testInfo: TestInfo, name: string): void {
  fs.mkdirSync(testInfo.project.outputDir, { recursive: true });
  fs.appendFileSync(deletionsFile(testInfo), `${name}\t${testInfo.testId}\n`);
}

/**
 * Of the URLs that answered 404, those about a job (`kale-ext/jobs/<name>`)
 * that another test deleted: this page listed it, and read it (its saved
 * result, outputs, final metrics) as it went. A user with two tabs sees the
 * same, which is the server's right answer; in this test it is the other
 * worker's doing. A 404 about a job this test deleted, or that nobody
 * deleted, still counts.
 */
function deletedElsewhere(urls: string[], testInfo: TestInfo): string[] {
  if (urls.length === 0) {
    return [];
  }
  let noted = '';
  try {
    noted = fs.readFileSync(deletionsFile(testInfo), 'utf-8');
  } catch {
    return [];
  }
  const byOthers = new Set(
    noted
      .split('\n')
      .map(line => line.split('\t'))
      .filter(([, id]) => id !== undefined && id !== testInfo.testId)
      .map(([name]) => name)
  );
  return urls.filter(url => {
    const job = /\/kale-ext\/jobs\/([^/?#]+)/.exec(new URL(url).pathname);
    return job !== null && byOthers.has(decodeURIComponent(job[1]));
  });
}

/**
 * JupyterLab's own poll of the kernel list (`GET /api/kernels`) meeting a
 * kernel another test is starting: jupyter_server 2.21 lists a kernel before
 * it sets its `last_activity`, and the TraitError that raises escapes
 * `MappingKernelManager.list_kernels` as a 500 (seen once in CI while the
 * other browser worker opened a notebook). Jupyter's race, not kale_ext's:
 * this one response is not counted; every other error is.
 */
function kernelListRace(message: ConsoleMessage): boolean {
  const { url } = message.location();
  return (
    message.text().includes('status of 500') &&
    !!url &&
    new URL(url).pathname.endsWith('/api/kernels')
  );
}

export { expect, galata };
export type { IJupyterLabPageFixture };

/**
 * The side panel's tab in the left sidebar.
 */
export function panelTab(page: IJupyterLabPageFixture): Locator {
  return page.locator(
    '.jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id="kale-ext-panel"]'
  );
}

export function panel(page: IJupyterLabPageFixture): Locator {
  return page.locator('#kale-ext-panel');
}

/**
 * Open the side panel (if it is not open).
 */
export async function openPanel(
  page: IJupyterLabPageFixture
): Promise<Locator> {
  const p = panel(page);
  if (!(await p.isVisible())) {
    await panelTab(page).click();
  }
  await expect(p).toBeVisible();
  return p;
}

/**
 * What is wrong with where the logs view's timeline foot (its legend and the
 * polled span) sits: it must be whole inside the view's insights box (not
 * cut by their scrolling, nor at the side) and above the log lines, not over
 * them. Empty when it sits right.
 */
export function timelineFootProblems(logs: Locator): Promise<string[]> {
  return logs.evaluate(view => {
    const box = (selector: string) =>
      view.querySelector(selector)?.getBoundingClientRect();
    const foot = box('.kale-ext-Timeline-foot');
    const insights = box('.kale-ext-Insights');
    const lines = box('[role="log"]');
    if (!foot || !insights || !lines) {
      return ['no timeline foot, insights or log lines'];
    }
    const problems: string[] = [];
    const slack = 0.5;
    if (
      foot.top < insights.top - slack ||
      foot.bottom > insights.bottom + slack
    ) {
      problems.push(
        `foot ${foot.top}-${foot.bottom} cut by the insights ${insights.top}-${insights.bottom}`
      );
    }
    if (foot.bottom > lines.top + slack) {
      problems.push(
        `foot ends at ${foot.bottom}, the lines start at ${lines.top}`
      );
    }
    view
      .querySelectorAll(
        '.kale-ext-Timeline-legend li, .kale-ext-Timeline-foot > *'
      )
      .forEach(el => {
        const r = el.getBoundingClientRect();
        if (
          r.right > insights.right + slack ||
          r.bottom > foot.bottom + slack
        ) {
          problems.push(
            `"${el.textContent}" clipped (right ${r.right}, bottom ${r.bottom})`
          );
        }
      });
    return problems;
  });
}

/**
 * The texts in `cells` that break inside a word (a word whose characters
 * are laid out on more than one line); wrapping at spaces is fine.
 */
export function brokenInWords(cells: Locator): Promise<string[]> {
  return cells.evaluateAll(nodes => {
    const broken: string[] = [];
    for (const node of nodes) {
      const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
      for (let t = walker.nextNode(); t; t = walker.nextNode()) {
        for (const word of (t.textContent ?? '').matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(t, word.index!);
          range.setEnd(t, word.index! + word[0].length);
          const tops = new Set(
            [...range.getClientRects()].map(r => Math.round(r.top))
          );
          if (tops.size > 1) {
            broken.push(word[0]);
          }
        }
      }
    }
    return broken;
  });
}

/**
 * The controls inside `root` that have no accessible name (aria-label, a
 * label for them, or their text for buttons and summaries).
 */
export function unnamedControls(root: Locator): Promise<string[]> {
  return root.evaluate(node => {
    const missing: string[] = [];
    node
      .querySelectorAll(
        'input, select, textarea, button, summary, [tabindex="0"]'
      )
      .forEach(el => {
        const id = el.getAttribute('id');
        const name =
          el.getAttribute('aria-label') ||
          (id
            ? document.querySelector(`label[for="${id}"]`)?.textContent
            : '') ||
          (el.tagName === 'BUTTON' || el.tagName === 'SUMMARY'
            ? el.textContent
            : '');
        if (!name || !name.trim()) {
          missing.push(el.outerHTML.slice(0, 100));
        }
      });
    return missing;
  });
}

/**
 * Write a notebook made of `cells` (source, tags) into the server's temporary
 * directory and open it.
 */
export async function openNotebook(
  page: IJupyterLabPageFixture,
  testInfo: TestInfo,
  tmpPath: string,
  name: string,
  cells: { source: string; tags?: string[]; type?: 'code' | 'markdown' }[],
  metadata: Record<string, unknown> = {}
): Promise<string> {
  const local = testInfo.outputPath(name);
  const notebook = {
    cells: cells.map((c, i) => ({
      cell_type: c.type ?? 'code',
      id: `cell-${i}`,
      metadata: c.tags ? { tags: c.tags } : {},
      source: c.source,
      ...(c.type === 'markdown' ? {} : { execution_count: null, outputs: [] })
    })),
    metadata: {
      kernelspec: {
        display_name: 'Python 3',
        language: 'python',
        name: 'python3'
      },
      language_info: { name: 'python' },
      ...metadata
    },
    nbformat: 4,
    nbformat_minor: 5
  };
  fs.writeFileSync(local, JSON.stringify(notebook, null, 1));
  return uploadAndOpen(page, local, `${tmpPath}/${name}`);
}

/**
 * Upload a local notebook to the server and open it.
 */
export async function uploadAndOpen(
  page: IJupyterLabPageFixture,
  local: string,
  remote: string
): Promise<string> {
  expect(await page.contents.uploadFile(local, remote)).toBe(true);
  // The file browser in view, not the panel. The notebook is opened by its
  // path: galata's openByPath double-clicks the first folder whose name
  // starts with the test's, which another test's (or a repeat's) can.
  await page.sidebar.openTab('filebrowser');
  await page.evaluate(async file => {
    await window.jupyterapp.commands.execute('docmanager:open', {
      path: file
    });
  }, remote);
  expect(await page.notebook.activate(path.basename(remote))).toBe(true);
  return remote;
}

/**
 * Save a screenshot as a test artifact, and for the docs unless `docs` is
 * false.
 */
export async function screenshot(
  target: Locator | IJupyterLabPageFixture,
  testInfo: TestInfo,
  name: string,
  docs = true
): Promise<void> {
  const dir = docs ? SCREENSHOTS : testInfo.outputDir;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  await target.screenshot({ path: file, animations: 'disabled' });
  await testInfo.attach(name, { path: file, contentType: 'image/png' });
}

/**
 * A window tall enough for the whole panel (for its screenshots).
 */
export const TALL = { width: 1024, height: 1600 };

/**
 * Save a screenshot of the panel, scrolled to the top, as a test artifact,
 * and for the docs unless `docs` is false.
 */
export async function panelScreenshot(
  page: IJupyterLabPageFixture,
  testInfo: TestInfo,
  name: string,
  docs = true
): Promise<void> {
  const p = panel(page);
  // The panel, and anything around it a focused control scrolled, to the top.
  await p.evaluate(node => {
    for (let el: Element | null = node; el; el = el.parentElement) {
      el.scrollTop = 0;
    }
  });
  const clip = (await p.boundingBox())!;
  const dir = docs ? SCREENSHOTS : testInfo.outputDir;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  await page.screenshot({ path: file, clip, animations: 'disabled' });
  await testInfo.attach(name, { path: file, contentType: 'image/png' });
}

/**
 * Wait until the current notebook's kernel is idle and has told the
 * notebook its language (which changes the notebook, so the panel checks it
 * again): after this, only the test changes the notebook.
 */
export async function kernelSettled(
  page: IJupyterLabPageFixture
): Promise<void> {
  await page.waitForFunction(() => {
    const panel = window.jupyterapp.shell.currentWidget as any;
    return (
      panel?.sessionContext?.session?.kernel?.status === 'idle' &&
      !!panel.model?.getMetadata('language_info')
    );
  });
}

/**
 * Submit the current notebook with these parameters; returns the job's name
 * (`kale.submit`, for specs written before the `kale` fixture).
 */
export function submitJob(
  page: IJupyterLabPageFixture,
  parameters: Record<string, string>
): Promise<string> {
  return new KaleUI(page, '', test.info()).submit(parameters);
}

/**
 * A cell of a notebook a test writes.
 */
export interface ICell {
  source: string;
  tags?: string[];
  type?: 'code' | 'markdown';
}

/**
 * How `kale.notebook` opens a notebook.
 */
export interface INotebookOptions {
  /** What the panel keeps in the notebook's metadata, already there. */
  metadata?: Record<string, unknown>;
  /** Wait until its kernel is idle (it writes the notebook's language). */
  settle?: boolean;
  /** Wait until the panel says it compiles. */
  compiles?: boolean;
  /** The test's timeout, in ms (a test that waits for jobs). */
  timeout?: number;
}

/**
 * A job row as the jobs table shows it.
 */
export interface IJobRow {
  name: string;
  status: string;
}

/**
 * What a user does with the panel, in one test's page: its notebooks are
 * written to the test's own server folder (`tmpPath`), its screenshots
 * attached to the test.
 */
export class KaleUI {
  constructor(
    readonly page: IJupyterLabPageFixture,
    readonly tmpPath: string,
    readonly testInfo: TestInfo
  ) {}

  /** The side panel. */
  get panel(): Locator {
    return panel(this.page);
  }

  /** The panel's tab in the left sidebar. */
  get tab(): Locator {
    return panelTab(this.page);
  }

  /** The form's check line ("Compiles: …", "3 errors"). */
  get validation(): Locator {
    return this.panel.locator('.kale-ext-Validation-status');
  }

  /** The message under Submit ("Submitted …", "Deleted …"). */
  get notice(): Locator {
    return this.panel.locator('.kale-ext-Notice');
  }

  /** The note of the values a reload restored ("Restored from your last session"). */
  get restoredNote(): Locator {
    return this.panel.getByRole('status', {
      name: 'Restored from your last session'
    });
  }

  /** The Submit button. */
  get submitButton(): Locator {
    return this.panel.getByRole('button', { name: 'Submit' });
  }

  /** Where notebook `name` is on the server (in the test's folder). */
  path(name: string): string {
    return `${this.tmpPath}/${name}`;
  }

  /**
   * Write a notebook of `cells` into the test's folder, open it and the
   * panel; the panel. `settle`: wait until its kernel is idle first;
   * `compiles`: then until the panel says it compiles; `timeout`: the
   * test's (ms; for a test that waits for jobs).
   */
  async notebook(
    name: string,
    cells: ICell[],
    options: INotebookOptions = {}
  ): Promise<Locator> {
    if (options.timeout) {
      test.setTimeout(options.timeout);
    }
    await this.write(name, cells, options.metadata);
    if (options.settle) {
      await kernelSettled(this.page);
    }
    const panel = await this.openPanel();
    if (options.compiles) {
      await this.compiles();
    }
    return panel;
  }

  /**
   * A notebook of a `parameters` cell (`lr = 0.1\nepochs = 2`) and a cell
   * printing them, open with the panel (`notebook`'s options).
   */
  parameters(
    name: string,
    source: string,
    options: INotebookOptions = {}
  ): Promise<Locator> {
    const names = source.split('\n').map(line => line.split('=')[0].trim());
    return this.notebook(
      name,
      [
        { source, tags: ['parameters'] },
        { source: `print(${names.join(', ')})` }
      ],
      options
    );
  }

  /**
   * Upload one of the repository's examples into the test's folder, open it,
   * wait until its kernel is idle, and open the panel; the panel.
   * `timeout`: the test's (ms; for a test that trains it).
   */
  async example(
    options: { name?: string; timeout?: number } = {}
  ): Promise<Locator> {
    const name = options.name ?? 'digits_ddp.ipynb';
    if (options.timeout) {
      test.setTimeout(options.timeout);
    }
    await uploadAndOpen(this.page, path.join(EXAMPLES, name), this.path(name));
    await kernelSettled(this.page);
    return this.openPanel();
  }

  /** Open the side panel (if it is not open). */
  openPanel(): Promise<Locator> {
    return openPanel(this.page);
  }

  /** Until the panel says the notebook compiles. */
  async compiles(): Promise<void> {
    await expect(this.validation).toHaveText(/Compiles/);
  }

  /**
   * Fill the panel's fields, by their exact labels (`{ Nodes: '2' }`).
   */
  async fill(fields: Record<string, string>): Promise<void> {
    for (const [label, value] of Object.entries(fields)) {
      await this.panel.getByLabel(label, { exact: true }).fill(value);
    }
  }

  /**
   * Submit the current notebook with these parameters (reset after); the
   * job's name, as the server answered and the notice says.
   */
  async submit(parameters: Record<string, string> = {}): Promise<string> {
    const names = Object.keys(parameters);
    await this.fill(
      Object.fromEntries(names.map(n => [`Parameter ${n}`, parameters[n]]))
    );
    const submitted = this.page.waitForResponse(
      r =>
        /\/kale-ext\/jobs(\?.*)?$/.test(r.url()) &&
        r.request().method() === 'POST'
    );
    await this.submitButton.click();
    const name = (await (await submitted).json()).name as string;
    await expect(this.notice).toContainText(`Submitted ${name}`);
    for (const n of names) {
      await this.panel.getByRole('button', { name: `Reset ${n}` }).click();
    }
    return name;
  }

  /** Start the sweep the panel describes; the server's answer. */
  async startSweep(): Promise<Response> {
    const started = this.page.waitForResponse(
      r =>
        /\/kale-ext\/sweeps(\?.*)?$/.test(r.url()) &&
        r.request().method() === 'POST'
    );
    await this.panel.getByRole('button', { name: 'Start sweep' }).click();
    return started;
  }

  /** The jobs table's row of job `name`. */
  row(name: string): Locator {
    return this.panel.locator(`.kale-ext-JobRow[data-job="${name}"]`);
  }

  /** Until job `name`'s row reads `status`. */
  async waitForStatus(
    name: string,
    status: string,
    timeout: number
  ): Promise<void> {
    await expect(this.row(name)).toHaveAttribute('data-status', status, {
      timeout
    });
  }

  /** The jobs table's rows, in the order shown. */
  jobs(): Promise<IJobRow[]> {
    return this.panel.locator('.kale-ext-JobRow').evaluateAll(rows =>
      rows.map(row => ({
        name: row.getAttribute('data-job') ?? '',
        status: row.getAttribute('data-status') ?? ''
      }))
    );
  }

  /** The logs view of job `name` (open or not). */
  logs(name: string): Locator {
    return this.page.locator(`#kale-ext-logs-${name}`);
  }

  /** Open job `name`'s logs from its row; the logs view. */
  async openLogs(name: string): Promise<Locator> {
    await this.row(name)
      .getByRole('button', { name: `Logs of ${name}` })
      .click();
    const logs = this.logs(name);
    await expect(logs).toBeVisible();
    return logs;
  }

  /**
   * Delete job `name` from its row: the dialog names it, `confirm` checks
   * what else it says, and the row goes.
   */
  async deleteJob(
    name: string,
    confirm: (dialog: Locator) => Promise<void> = async () => undefined,
    timeout?: number
  ): Promise<void> {
    noteDeletion(this.testInfo, name);
    await this.row(name)
      .getByRole('button', { name: `Delete ${name}` })
      .click();
    const dialog = this.page.locator('.jp-Dialog');
    await expect(dialog).toContainText(name);
    await confirm(dialog);
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await expect(this.row(name)).toHaveCount(0, { timeout });
  }

  /**
   * Widen the left sidebar, the panel in it, by `px` (for screenshots and
   * wide tables): its split handle dragged to the right.
   */
  async widen(px: number): Promise<void> {
    const { page } = this;
    const handle = page
      .locator('#jp-main-split-panel > .lm-SplitPanel-handle')
      .first();
    const box = (await handle.boundingBox())!;
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width / 2, y);
    await page.mouse.down();
    await page.mouse.move(box.x + px, y, { steps: 5 });
    await page.mouse.up();
  }

  /**
   * Reload the page and wait until JupyterLab has restored its layout. (Not
   * galata's reload: it waits for the Launcher, which restored tabs hide,
   * and evaluates in a document the reload can collect under it.)
   */
  async reload(): Promise<void> {
    const { page } = this;
    await Promise.all([
      page.waitForEvent('load'),
      page.evaluate(() => {
        setTimeout(() => window.location.reload(), 0);
      })
    ]);
    await page.waitForFunction(() => typeof window.jupyterapp === 'object');
    await page.evaluate(async () => {
      await window.jupyterapp.restored;
    });
  }

  /**
   * Reload as a user does while the notebook has unsaved changes:
   * JupyterLab asks before leaving; leave anyway.
   */
  async reloadLeaving(): Promise<void> {
    this.page.once('dialog', dialog => void dialog.accept());
    await this.reload();
  }

  /** Resolves when the panel has kept a state holding `text` on the server. */
  kept(text: string): Promise<Response> {
    return this.page.waitForResponse(
      r =>
        r.url().includes('/kale-ext/panel-state') &&
        r.request().method() === 'PUT' &&
        (r.request().postData() ?? '').includes(text) &&
        r.status() === 200
    );
  }

  /**
   * Run the `%%trainjob` cell `source` (its job named by its `--name`, on
   * the local backend) from a notebook of its own, `[%load_ext kale_ext,
   * source, %kale_delete <name>]`; its monitor widget, once the job is
   * Complete.
   */
  async magicJob(notebook: string, source: string): Promise<Locator> {
    const job = / --name (\S+)/.exec(source)![1];
    await this.write(notebook, [
      { source: '%load_ext kale_ext' },
      { source },
      { source: `%kale_delete ${job} --backend local` }
    ]);
    await this.page.notebook.runCell(0, true);
    // The magic returns at once: the monitor polls from a background thread.
    await this.page.notebook.runCell(1, true);
    const monitor = this.page.locator('.kale-ext-monitor');
    await expect(monitor).toBeVisible({ timeout: 60_000 });
    await expect(monitor).toContainText(job);
    await expect(monitor.locator('.kale-ext-status')).toHaveText('Complete', {
      timeout: JOB_TIMEOUT
    });
    return monitor;
  }

  /** Delete the job of `magicJob` with its notebook's `%kale_delete`. */
  async magicDelete(job: string): Promise<void> {
    noteDeletion(this.testInfo, job);
    await this.page.notebook.runCell(2, true);
    expect(await this.page.notebook.getCellTextOutput(2)).toEqual([
      `deleted ${job}\n`
    ]);
  }

  /** Write a notebook of `cells` into the test's folder and open it. */
  private async write(
    name: string,
    cells: ICell[],
    metadata: Record<string, unknown> = {}
  ): Promise<void> {
    const { page, testInfo, tmpPath } = this;
    await openNotebook(page, testInfo, tmpPath, name, cells, metadata);
  }

  /** The tags of cell `index` of the notebook in front. */
  cellTags(index: number): Promise<string[] | undefined> {
    return this.page.evaluate(i => {
      const nb = window.jupyterapp.shell.currentWidget as any;
      return nb.content.widgets[i].model.getMetadata('tags');
    }, index);
  }

  /** What the panel keeps in the notebook's metadata. */
  metadata(): Promise<unknown> {
    return this.page.evaluate(() => {
      const nb = window.jupyterapp.shell.currentWidget as any;
      return nb.context.model.getMetadata('kale_ext');
    });
  }

  /** Where the cursor is in the active cell of the notebook in front. */
  cursor(): Promise<{ line: number; column: number }> {
    return this.page.evaluate(() => {
      const nb = window.jupyterapp.shell.currentWidget as any;
      return nb.content.activeCell.editor.getCursorPosition();
    });
  }

  /** A screenshot of `target` (the page by default), for the docs unless `docs` is false. */
  screenshot(
    name: string,
    target: Locator | IJupyterLabPageFixture = this.page,
    docs = true
  ): Promise<void> {
    return screenshot(target, this.testInfo, name, docs);
  }

  /** A screenshot of the panel, scrolled to the top (see `panelScreenshot`). */
  panelScreenshot(name: string, docs = true): Promise<void> {
    return panelScreenshot(this.page, this.testInfo, name, docs);
  }
}
