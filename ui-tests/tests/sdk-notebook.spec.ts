/**
 * A Kubeflow SDK notebook in the panel, as its user wrote it (no tag): the
 * notebook's own TrainerClient().train(...) call is the job. The shapes are
 * those of tests/compile/sdk_notebooks.py.
 */
import type { Locator } from '@playwright/test';

import { expect, ICell, KaleUI, TALL, test } from './fixtures';

test.use({ viewport: TALL });

const JOB_TIMEOUT = 180_000;

const IMPORTS: ICell = {
  source: 'import os\nfrom kubeflow.trainer import CustomTrainer, TrainerClient'
};

/**
 * torch: the runtime from the list_runtimes() loop, the nodes and a
 * greeting bound in an earlier cell, an f-string and str() of them.
 */
const TORCH: ICell[] = [
  IMPORTS,
  { source: "num_nodes = 2\ngreeting = 'hello'" },
  {
    source:
      'def train_hello(greeting, repeat=1):\n' +
      '    import os\n' +
      '    import torch.distributed as dist\n' +
      "    dist.init_process_group('gloo')\n" +
      '    rank, size = dist.get_rank(), dist.get_world_size()\n' +
      '    for _ in range(repeat):\n' +
      '        print(f"{greeting} {os.environ[\'WHO\']} from rank {rank} of {size}")\n' +
      '    dist.barrier()\n' +
      '    dist.destroy_process_group()'
  },
  {
    source:
      'client = TrainerClient()\n' +
      'for r in client.list_runtimes():\n' +
      "    if r.name == 'torch-distributed':\n" +
      '        torch_runtime = r'
  },
  {
    source:
      'job_id = client.train(\n' +
      '    runtime=torch_runtime,\n' +
      '    trainer=CustomTrainer(\n' +
      '        func=train_hello,\n' +
      "        func_args={'greeting': f'{greeting}-sdk'},\n" +
      '        num_nodes=num_nodes,\n' +
      "        env={'WHO': str(num_nodes)},\n" +
      '    ),\n' +
      ')'
  },
  { source: 'client.wait_for_job_status(job_id)' }
];

const PATCHED: ICell = {
  source: "def train_patched(lr=0.1):\n    print('lr', lr)"
};

/** Two train() calls: a small try, then the real run. */
const TWO_CALLS: ICell[] = [
  IMPORTS,
  PATCHED,
  {
    source:
      'client = TrainerClient()\n' +
      "client.train(trainer=CustomTrainer(func=train_patched, num_nodes=1, func_args={'lr': 1.0}))"
  },
  {
    source:
      "client.train(runtime='torch-distributed',\n" +
      "    trainer=CustomTrainer(func=train_patched, num_nodes=3, func_args={'lr': 0.01}))"
  }
];

/** Notebooks the panel refuses: where, and what it says. */
const REFUSED: {
  name: string;
  cells: ICell[];
  place: string;
  cell: number;
  says: RegExp;
}[] = [
  {
    name: 'builtin',
    cells: [
      {
        source:
          'from kubeflow.trainer import BuiltinTrainer, TorchTuneConfig, TrainerClient'
      },
      {
        source:
          'client = TrainerClient()\n' +
          "client.train(runtime='torchtune-llama3.2-1b',\n" +
          '    trainer=BuiltinTrainer(config=TorchTuneConfig(num_nodes=1)))'
      }
    ],
    place: 'cell 2, line 3',
    cell: 1,
    says: /BuiltinTrainer .*CustomTrainer\(func=/
  },
  {
    name: 'missing-name',
    cells: [
      IMPORTS,
      PATCHED,
      {
        source:
          'client = TrainerClient()\n' +
          'client.train(trainer=CustomTrainer(func=train_patched,\n' +
          "    env={'BUCKET': BUCKET_NAME}))"
      }
    ],
    place: 'cell 3, line 3',
    cell: 2,
    says: /BUCKET_NAME is never defined/
  }
];

/** The preview's setting read from the notebook, by its name. */
function setting(kale: KaleUI, name: string): Locator {
  return kale.panel
    .locator('.kale-ext-PreviewProvenance')
    .locator(`[data-setting="${name}"]`);
}

/** The index of the notebook's active cell. */
function activeCell(kale: KaleUI): Promise<number> {
  return kale.page.evaluate(() => {
    const nb = window.jupyterapp.shell.currentWidget as any;
    return nb.content.activeCellIndex;
  });
}

test('an SDK notebook with no tag compiles; the preview says where each setting was read and what the panel overrides', async ({
  kale
}) => {
  await kale.notebook('sdk_torch.ipynb', TORCH, { settle: true });
  await expect(kale.validation).toHaveText('Compiles: train_hello()');
  const preview = kale.panel.locator('[data-section="preview"]');
  await expect(preview).toContainText("Read from the notebook's train() call");

  // Each setting, its value as the notebook resolves it, and its place.
  for (const [name, value, place] of [
    ['function', 'train_hello', 'cell 3, line 1'],
    ['runtime', 'torch-distributed', 'cell 5, line 2'],
    ['nodes', '2', 'cell 5, line 6'],
    ['func_args', '{"greeting":"hello-sdk"}', 'cell 5, line 5'],
    ['env', '{"WHO":"2"}', 'cell 5, line 7']
  ]) {
    const row = setting(kale, name);
    await expect(row.locator('code'), name).toHaveText(value);
    await expect(
      row.getByRole('button', { name: `Go to ${place}` }),
      name
    ).toBeVisible();
  }
  await expect(preview.locator('[data-fact="shape"]')).toHaveText(
    '2 nodes × 1 process'
  );
  await expect(preview.locator('[data-fact="procs-why"]')).toHaveText(
    /^processes per node: the runtime's choice/
  );
  await kale.screenshot('sdk-notebook.png', preview);

  // The parameters are what the job gets: the call's func_args over the defaults.
  await expect(kale.panel.getByLabel('Parameter greeting')).toHaveValue(
    'hello-sdk'
  );
  await expect(kale.panel.getByLabel('Parameter repeat')).toHaveValue('1');

  // A link selects the cell, the cursor on the line.
  await setting(kale, 'env')
    .getByRole('button', { name: 'Go to cell 5, line 7' })
    .click();
  await expect.poll(() => activeCell(kale)).toBe(4);
  await expect(kale.page.locator('.jp-Notebook .jp-Cell').nth(4)).toHaveClass(
    /jp-mod-active/
  );
  await expect.poll(() => kale.cursor()).toEqual({ line: 6, column: 0 });
  // The tag editor says an untagged cell is not training code here.
  const tags = kale.panel.locator('[data-section="tags"]');
  await expect(tags).toContainText(
    'Cell 5: untagged: left out of the job (the job is train_hello(), named by the train() call)'
  );
  await setting(kale, 'function')
    .getByRole('button', { name: 'Go to cell 3, line 1' })
    .click();
  await expect.poll(() => activeCell(kale)).toBe(2);
  await expect(tags).toContainText(
    'Cell 3: untagged: its function train_hello() is the job'
  );

  // The panel's nodes win over the notebook's, and the preview says so.
  await expect(setting(kale, 'nodes')).not.toContainText('overridden');
  await kale.fill({ Nodes: '4' });
  await expect(setting(kale, 'nodes')).toContainText(
    'overridden by the panel: 4'
  );
  await expect(preview.locator('[data-fact="shape"]')).toHaveText(
    '4 nodes × 1 process'
  );
  await expect(setting(kale, 'env')).not.toContainText('overridden');
});

test('a notebook with two train() calls: the panel names each by its cell and line, and the one chosen is the job', async ({
  kale
}) => {
  await kale.notebook('sdk_two_calls.ipynb', TWO_CALLS, { settle: true });
  await kale.compiles();
  const choice = kale.panel.getByLabel('train() call', { exact: true });
  await expect(choice.locator('option')).toHaveText([
    'Default: the last (call 2)',
    'Call 1: cell 3, line 2',
    'Call 2: cell 4, line 1 (the last)'
  ]);
  const shape = kale.panel.locator('[data-fact="shape"]');
  await expect(shape).toHaveText('3 nodes × 1 process');
  await expect(setting(kale, 'nodes').locator('code')).toHaveText('3');

  await choice.selectOption({ label: 'Call 1: cell 3, line 2' });
  await expect(shape).toHaveText('1 node × 1 process');
  await expect(setting(kale, 'nodes').locator('code')).toHaveText('1');
  await expect(
    setting(kale, 'nodes').getByRole('button', { name: 'Go to cell 3, line 2' })
  ).toBeVisible();
  await expect(setting(kale, 'func_args').locator('code')).toHaveText(
    '{"lr":1}'
  );
  // The choice is kept with the notebook.
  await expect
    .poll(() => kale.metadata())
    .toMatchObject({ options: { train_call: 1 } });
});

test('an SDK notebook submitted from the panel runs locally on its 2 nodes', async ({
  kale
}) => {
  await kale.notebook('sdk_hello.ipynb', TORCH, { settle: true });
  await expect(kale.validation).toHaveText('Compiles: train_hello()');
  const name = await kale.submit();
  await kale.waitForStatus(name, 'Complete', JOB_TIMEOUT);
  const logs = await kale.openLogs(name);
  await expect(logs.locator('.kale-ext-LogsStatus')).toContainText(
    'Ended: Complete'
  );
  // The function's output from both nodes, with the notebook's arguments and env.
  const lines = logs.getByRole('log');
  for (const rank of [0, 1]) {
    await expect(lines).toContainText(`hello-sdk 2 from rank ${rank} of 2`);
  }
});

for (const refused of REFUSED) {
  test(`a refused SDK notebook (${refused.name}): the checks name the cell and line, link to it, and Submit is disabled`, async ({
    kale
  }) => {
    await kale.notebook(`sdk_${refused.name}.ipynb`, refused.cells, {
      settle: true
    });
    await expect(kale.validation).toHaveText(/^\d+ errors?$/);
    const error = kale.panel
      .locator('.kale-ext-Diagnostic.kale-ext-mod-error')
      .filter({ hasText: refused.says });
    await expect(error).toHaveCount(1);
    await expect(error).not.toContainText('tag the cell');
    await expect(kale.submitButton).toBeDisabled();
    await error.getByRole('button', { name: `Go to ${refused.place}` }).click();
    await expect.poll(() => activeCell(kale)).toBe(refused.cell);
    await expect.poll(async () => (await kale.cursor()).line).toBe(2);
    await expect(kale.panel.locator('[data-section="preview"]')).toContainText(
      'Fix the errors to see what the job will be.'
    );
  });
}
