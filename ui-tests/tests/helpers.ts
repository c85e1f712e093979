import {
  expect,
  galata,
  IJupyterLabPageFixture,
  test as base
} from '@jupyterlab/galata';
import type { Locator, TestInfo } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

/**
 * Where the screenshots for the documentation go.
 */
export const SCREENSHOTS = path.resolve(
  __dirname,
  '..',
  '..',
  'docs',
  'screenshots'
);

/**
 * The repository's examples.
 */
export const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');

/**
 * Galata's test, with the page loaded after a console listener is attached:
 * every browser console error and uncaught exception of a test (page load
 * included) fails it.
 */
export const test = base.extend<{ consoleErrors: string[] }>({
  autoGoto: false,
  consoleErrors: [
    async ({ page }, use) => {
      const errors: string[] = [];
      page.on('console', message => {
        if (message.type() === 'error') {
          errors.push(message.text());
        }
      });
      page.on('pageerror', error => errors.push(`uncaught: ${error.message}`));
      await page.goto();
      await use(errors);
      expect(errors, 'errors in the browser console').toEqual([]);
    },
    { auto: true }
  ]
});

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
  expect(await page.notebook.openByPath(remote)).toBe(true);
  await page.notebook.activate(path.basename(remote));
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
 * Submit the current notebook with these parameters; returns the job's name.
 */
export async function submitJob(
  page: IJupyterLabPageFixture,
  parameters: Record<string, string>
): Promise<string> {
  const p = panel(page);
  for (const [name, value] of Object.entries(parameters)) {
    await p.getByLabel(`Parameter ${name}`, { exact: true }).fill(value);
  }
  const submitted = page.waitForResponse(
    r =>
      /\/kale-ext\/jobs(\?.*)?$/.test(r.url()) &&
      r.request().method() === 'POST'
  );
  await p.getByRole('button', { name: 'Submit' }).click();
  const body = await (await submitted).json();
  for (const name of Object.keys(parameters)) {
    await p.getByRole('button', { name: `Reset ${name}` }).click();
  }
  return body.name as string;
}
