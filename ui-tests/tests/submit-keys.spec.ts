import { expect, JOB_TIMEOUT, test } from './fixtures';
import type { IJupyterLabPageFixture } from './fixtures';

/**
 * Submitting as a keyboard user does, and what a submit leaves open (issue
 * 41): "Kale: Submit job" in the command palette, Ctrl+Enter in the panel,
 * Submit before the jobs list in the tab order; one logs tab per notebook's
 * submits (a pinned one stays), the notebook keeping the focus; and the
 * preview saying what the job changes from the notebook.
 */

test.use({ viewport: { width: 1400, height: 1000 } });

/** The label of the main area's current widget (the notebook keeps it). */
function current(page: IJupyterLabPageFixture): Promise<string | undefined> {
  return page.evaluate(
    () =>
      (
        window as unknown as {
          jupyterapp: {
            shell: { currentWidget: { title: { label: string } } };
          };
        }
      ).jupyterapp.shell.currentWidget?.title.label
  );
}

/** The name of the job the next `POST jobs` makes, once `act` sent it. */
async function submitted(
  page: IJupyterLabPageFixture,
  act: () => Promise<void>
): Promise<string> {
  const answer = page.waitForResponse(
    r =>
      /\/kale-ext\/jobs(\?.*)?$/.test(r.url()) &&
      r.request().method() === 'POST'
  );
  await act();
  return (await (await answer).json()).name as string;
}

test('Kale: Submit job from the palette, Ctrl+Enter in the panel; one logs tab per notebook unless pinned, the notebook keeping the focus', async ({
  page,
  kale
}) => {
  const p = await kale.parameters('keys.ipynb', 'steps = 2', {
    settle: true,
    compiles: true,
    timeout: 3 * JOB_TIMEOUT
  });
  const logsTabs = page.locator('.lm-TabBar-tab', { hasText: /^Logs: / });

  // Submit comes before the jobs list in the tab order, drawn below it
  // (scrolled to the end, its bar rests after the list).
  const order = await p.evaluate(node => {
    node.scrollTop = node.scrollHeight;
    const submit = Array.from(node.querySelectorAll('button')).find(
      b => b.textContent === 'Submit'
    )!;
    const jobs = node.querySelector('[data-section="jobs"]')!;
    const below =
      submit.getBoundingClientRect().top >=
      jobs.getBoundingClientRect().bottom - 1;
    node.scrollTop = 0;
    return {
      before: Boolean(
        submit.compareDocumentPosition(jobs) & Node.DOCUMENT_POSITION_FOLLOWING
      ),
      below
    };
  });
  expect(order).toEqual({ before: true, below: true });

  // The palette: "Kale: Submit job" submits.
  await page.locator('.jp-NotebookPanel .jp-Cell').first().click();
  await page.keyboard.press('Control+Shift+C');
  const palette = page.locator('#command-palette');
  await palette.locator('input').fill('Kale: Submit job');
  const item = palette.locator('.lm-CommandPalette-item', {
    hasText: 'Kale: Submit job'
  });
  await expect(item).toBeVisible();
  const first = await submitted(page, () => item.click());
  await expect(kale.logs(first)).toBeVisible();
  expect(await current(page)).toBe('keys.ipynb');

  // Ctrl+Enter in the panel's form: the second job's logs take the first's
  // tab, and the notebook is still the current widget.
  await kale.fill({ 'Parameter steps': '3' });
  const second = await submitted(page, () =>
    p.getByLabel('Parameter steps', { exact: true }).press('Control+Enter')
  );
  expect(second).not.toBe(first);
  await expect(kale.logs(second)).toBeVisible();
  await expect(kale.logs(first)).toHaveCount(0);
  await expect(logsTabs).toHaveCount(1);
  expect(await current(page)).toBe('keys.ipynb');

  // Pinned, the tab stays: the next submit opens one beside it.
  const pin = kale.logs(second).getByRole('button', { name: 'Pin' });
  await pin.click();
  await expect(pin).toHaveAttribute('aria-pressed', 'true');
  const third = await submitted(page, () =>
    p.getByLabel('Parameter steps', { exact: true }).press('Control+Enter')
  );
  await expect(kale.logs(third)).toBeAttached();
  await expect(kale.logs(second)).toBeAttached();
  await expect(logsTabs).toHaveCount(2);
  for (const name of [first, second, third]) {
    await kale.waitForStatus(name, 'Complete', JOB_TIMEOUT);
  }
});

test('the preview says the parameters set and a sweep’s trials, and opens the compiled function', async ({
  page,
  kale
}) => {
  const p = await kale.parameters('differs.ipynb', 'lr = 0.01\nepochs = 2', {
    compiles: true
  });
  const preview = p.locator('[data-section="preview"]');
  const fact = (name: string) => preview.locator(`[data-fact="${name}"]`);
  await expect(fact('parameters')).toHaveText('the notebook’s defaults');

  await kale.fill({ 'Parameter epochs': '5' });
  await expect(fact('parameters')).toHaveText('epochs: 2 → 5');

  await p.getByRole('button', { name: 'Sweep lr' }).click();
  await p.getByLabel('Sweep values of lr').fill('0.1, 0.2, 0.3');
  await expect(fact('sweep')).toContainText(
    '3 trials (grid: every combination)'
  );
  await expect(fact('sweep')).toContainText('lr: 0.1, 0.2, 0.3');
  await expect(fact('parameters')).toHaveText('epochs: 2 → 5');

  await preview.getByRole('button', { name: 'View compiled function' }).click();
  const source = page.locator('.kale-ext-Source');
  await expect(source).toBeVisible();
  await expect(source.getByLabel(/^Compiled function /)).toContainText('def ');
  await expect(source.getByLabel(/^Compiled function /)).toContainText(
    'epochs'
  );
  await expect(
    page.locator('.lm-TabBar-tab', { hasText: 'compiled, read-only' })
  ).toHaveCount(1);
});
