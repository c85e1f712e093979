import { expect, TALL, test } from './fixtures';

test.use({ viewport: TALL });

test('parameters are typed by the server: its message on the field, its value in the TrainJob', async ({
  kale,
  page
}) => {
  const panel = await kale.parameters(
    'typed.ipynb',
    'epochs = 6\nlr = 0.05\ndebug = True',
    { compiles: true }
  );

  // `abc` for an int parameter: the server's message, on the field.
  const epochs = panel.getByLabel('Parameter epochs', { exact: true });
  await epochs.fill('abc');
  const row = panel.locator('.kale-ext-ParamRow', {
    has: page.getByLabel('Parameter epochs', { exact: true })
  });
  await expect(row.locator('.kale-ext-Field-error')).toHaveText(
    "expects an int (a whole number) like its default 6, not 'abc'"
  );
  await expect(epochs).toHaveAttribute('aria-invalid', 'true');
  await expect(kale.submitButton).toBeDisabled();
  await kale.panelScreenshot('panel-parameter-error.png', false);

  // `1e-3` for a float and `False` for a bool: the TrainJob carries the
  // values the function gets.
  await kale.fill({
    'Parameter epochs': '2',
    'Parameter lr': '1e-3',
    'Parameter debug': 'False'
  });
  await kale.compiles();
  await expect(row.locator('.kale-ext-Field-error')).toHaveCount(0);
  // (YAML may fold the quoted spec across lines: read it as one line)
  const yaml = panel.getByLabel('TrainJob YAML');
  const spec = async () =>
    ((await yaml.textContent()) ?? '').replace(/\s+/g, ' ');
  await expect
    .poll(spec)
    .toContain('"args": {"debug": false, "epochs": 2, "lr": 0.001}');
});
