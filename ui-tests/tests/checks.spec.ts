import { expect, TALL, test } from './fixtures';

test.use({ viewport: TALL });

test('three invalid fields are three checks, by label and in form order, each leading to its field', async ({
  kale
}) => {
  const panel = await kale.parameters('checks.ipynb', 'epochs = 6', {
    compiles: true
  });

  await panel.getByLabel('Memory limit per node').fill('abc');
  await panel.getByLabel('Job name').fill('MyTrainingJob');
  await panel.getByLabel('CPU request per node').fill('4');
  await panel.getByLabel('CPU limit per node').fill('500m');

  await expect(kale.validation).toHaveText('3 errors');
  const checks = panel.getByRole('list', { name: 'Fields to fix' });
  await expect(checks.getByRole('listitem')).toHaveCount(3);
  await expect(checks.getByRole('button')).toHaveText([
    'Job name',
    'CPU request',
    'Memory limit'
  ]);
  await expect(checks.getByRole('listitem').first()).toContainText(
    'try mytrainingjob'
  );
  await expect(checks.getByRole('listitem').nth(1)).toContainText(
    '4 is more than its limit 500m'
  );
  await kale.panelScreenshot('panel-checks.png');

  // A check takes the cursor to its field.
  await checks.getByRole('button', { name: 'Go to Memory limit' }).click();
  await expect(panel.getByLabel('Memory limit per node')).toBeFocused();

  // The suggestion, taken, clears its check.
  await panel.getByRole('textbox', { name: 'Job name' }).fill('mytrainingjob');
  await expect(kale.validation).toHaveText('2 errors');
});

test('a notebook that does not compile: the parameters say why, the error link puts the cursor on the line', async ({
  kale,
  page
}) => {
  const panel = await kale.notebook('broken.ipynb', [
    { source: 'epochs = 6', tags: ['parameters'] },
    { source: 'rows = 3\nprint(rows)\nprint(undefined_frame.head())' }
  ]);
  await expect(kale.validation).toHaveText(/\d+ errors?/);
  await expect(panel.locator('[data-section="parameters"]')).toContainText(
    'Cannot read the parameters: the notebook does not compile'
  );

  const error = panel
    .locator('.kale-ext-Diagnostic.kale-ext-mod-error')
    .filter({ hasText: 'undefined_frame' });
  await error.getByRole('button', { name: /Go to cell 2, line 3/ }).click();
  const cell = page.locator('.jp-Notebook .jp-Cell').nth(1);
  await expect(cell).toHaveClass(/jp-mod-active/);
  await expect(page.locator('.jp-Notebook')).toHaveClass(/jp-mod-editMode/);
  expect(await kale.cursor()).toEqual({ line: 2, column: 0 });
  await kale.panelScreenshot('panel-compile-failed.png', false);
});
