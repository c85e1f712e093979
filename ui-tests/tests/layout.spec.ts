import { expect, TALL, test } from './fixtures';

test.use({ viewport: TALL });

test("folding the runtime's package list leaves JOB open; Packages says what it holds before it is opened", async ({
  kale
}) => {
  const panel = await kale.notebook('layout.ipynb', [{ source: 'print(1)' }]);
  const job = panel.locator('[data-section="job"]');
  const packages = job.locator('.kale-ext-RuntimePackages');
  const summary = packages.locator('summary');
  // Before it is opened: a disclosure arrow and what opening it shows.
  await expect(summary).toContainText(
    /Packages\s*installed in \S+: open to list/
  );
  const arrow = await summary.evaluate(
    el => getComputedStyle(el, '::before').borderLeftWidth
  );
  expect(arrow).toBe('6px');

  await summary.click();
  await expect(summary.locator('.kale-ext-Count')).toHaveText(/\d+/);
  await expect(
    packages.getByRole('list', { name: 'Installed packages' })
  ).toBeVisible();
  await kale.panelScreenshot('panel-runtime-packages.png', false);

  // Folding it, again and again, leaves the JOB section open.
  for (let i = 0; i < 3; i++) {
    await summary.click();
    await expect(packages).not.toHaveAttribute('open', '');
    await expect(job).toHaveAttribute('open', '');
    await expect(panel.getByLabel('Nodes', { exact: true })).toBeVisible();
    await summary.click();
    await expect(packages).toHaveAttribute('open', '');
  }
});

test('a cell has one role: radio chips with "untagged", and a role change can be undone', async ({
  kale,
  page
}) => {
  const panel = await kale.notebook('roles.ipynb', [
    { source: 'epochs = 6', tags: ['parameters', 'hide-input'] },
    { source: 'print(epochs)' }
  ]);
  const cell = page.locator('.jp-Notebook .jp-Cell').first();
  await cell.locator('.jp-InputPrompt').click();
  const roles = panel.getByRole('radiogroup', { name: 'Role of cell 1' });
  const parameters = roles.getByRole('radio', { name: 'parameters' });
  await expect(parameters).toBeChecked();
  await expect(
    roles.getByRole('radio', { name: 'untagged' })
  ).not.toBeChecked();

  // Clicking the chosen role keeps it (it is not a toggle).
  await parameters.click();
  await expect(parameters).toBeChecked();
  expect(await kale.cellTags(0)).toEqual(['parameters', 'hide-input']);

  // Another role replaces it, keeping the other tags; the panel says so.
  await roles.getByRole('radio', { name: 'training' }).click();
  await expect(roles.getByRole('radio', { name: 'training' })).toBeChecked();
  await expect(parameters).not.toBeChecked();
  expect(await kale.cellTags(0)).toEqual(['hide-input', 'training']);
  const change = panel.locator('.kale-ext-TagEditor-change');
  await expect(change).toHaveText(/Cell 1: parameters → training\s*Undo/);
  await kale.panelScreenshot('panel-cell-role.png');

  // Undo in the panel brings the role back.
  await change.getByRole('button', { name: /Undo/ }).click();
  await expect(parameters).toBeChecked();
  expect(await kale.cellTags(0)).toEqual(['parameters', 'hide-input']);

  // "untagged" is a choice of its own, and the notebook's Undo reverts it.
  await roles.getByRole('radio', { name: 'untagged' }).click();
  await expect(roles.getByRole('radio', { name: 'untagged' })).toBeChecked();
  expect(await kale.cellTags(0)).toEqual(['hide-input']);
  await cell.locator('.jp-InputPrompt').click();
  await page.keyboard.press('Escape');
  await page.keyboard.press('z');
  await expect(parameters).toBeChecked();
  expect(await kale.cellTags(0)).toEqual(['parameters', 'hide-input']);
});
