import type { INotebookTracker } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import type { KaleService } from '../api';
import { PanelState } from '../panel/state';
import { KalePanel } from '../panel/widget';
import type { Kale } from '../types';
import { compileResult, fakeNotebook, fakeService, fakeTracker } from './fakes';
import { until } from './helpers';
import { inAct } from './render';

/**
 * A Kubeflow SDK notebook in the whole panel, as a user sees it: the
 * settings read from its train() call in the preview, each linked to its
 * cell and line, and the choice of which train() call is the job.
 */

/** What the server answers for a notebook with two train() calls. */
function sdkCompile(options: Kale.IJobOptions): Kale.ICompileResult {
  const first = options.train_call === 1;
  return compileResult({
    function_name: 'train_patched',
    nodes: first ? 1 : 3,
    train_calls: [
      { cell: 2, line: 1 },
      { cell: 3, line: 4 }
    ],
    warnings: [
      {
        severity: 'warning',
        message: `the notebook has 2 train() calls (1 (cell 1), 2 (cell 1)): the job is call ${first ? 1 : 2}`,
        cell: 0,
        line: first ? 2 : 5,
        code: 'train-calls'
      }
    ],
    provenance: [
      {
        setting: 'nodes',
        value: first ? 1 : 3,
        cell: 0,
        line: first ? 2 : 5,
        overridden_by: options.nodes !== undefined ? ['nodes'] : []
      },
      {
        setting: 'func_args',
        value: { lr: 0.01 },
        cell: 0,
        line: 3,
        overridden_by: []
      }
    ]
  });
}

async function setup(metadata?: unknown) {
  const nb = fakeNotebook({ metadata });
  const editor = {
    lineCount: 8,
    setCursorPosition: jest.fn(),
    focus: jest.fn()
  };
  Object.assign(nb.notebook.widgets[0], { editor });
  const service = fakeService();
  service.compile.mockImplementation((body: Kale.JobRequest) =>
    Promise.resolve(sdkCompile(body.options ?? {}))
  );
  const state = new PanelState({
    service: service as unknown as KaleService,
    tracker: fakeTracker(nb) as unknown as INotebookTracker,
    openLogs: jest.fn(),
    confirm: jest.fn().mockResolvedValue(true),
    editDefaults: jest.fn(),
    compileDelay: 0,
    pollInterval: 1e6
  });
  const panel = new KalePanel(state);
  await inAct(() => Widget.attach(panel, document.body));
  const settings = await until(() =>
    panel.node.querySelector('[aria-label="Read from the notebook"]')
  );
  return { ...nb, editor, service, state, panel, settings };
}

function choice(panel: Widget): HTMLSelectElement | null {
  return panel.node.querySelector<HTMLSelectElement>(
    'select[name="trainCall"]'
  );
}

describe('PanelView on a Kubeflow SDK notebook', () => {
  let ctx: Awaited<ReturnType<typeof setup>> | undefined;
  afterEach(() => ctx?.panel.dispose());

  it("lists each setting read from the notebook, linked to its cell and line, and marks the panel's override", async () => {
    ctx = await setup({ options: { nodes: 4 }, config: {} });
    const { settings, notebook, editor } = ctx;
    const rows = [...settings.querySelectorAll('dd')].map(dd => [
      dd.getAttribute('data-setting'),
      dd.textContent
    ]);
    expect(rows).toEqual([
      ['nodes', '3 cell 1, line 5 overridden by the panel: 4'],
      ['func_args', '{"lr":0.01} cell 1, line 3']
    ]);
    const link = settings.querySelector<HTMLButtonElement>(
      '[aria-label="Go to cell 1, line 3"]'
    )!;
    await inAct(() => link.click());
    await until(() => editor.setCursorPosition.mock.calls.length > 0);
    expect(notebook.activeCellIndex).toBe(0);
    expect(editor.setCursorPosition).toHaveBeenCalledWith({
      line: 2,
      column: 0
    });
  });

  it('offers the train() calls, the last by default; the choice is compiled and kept in the notebook', async () => {
    ctx = await setup();
    const { panel, service, model } = ctx;
    const select = choice(panel)!;
    expect(select.value).toBe('');
    expect([...select.options].map(o => [o.value, o.text])).toEqual([
      ['', 'Default: the last (call 2)'],
      ['1', 'Call 1: cell 3, line 1'],
      ['2', 'Call 2: cell 4, line 4 (the last)']
    ]);
    expect(service.compile.mock.calls[0][0].options).toEqual({});

    const calls = service.compile.mock.calls.length;
    await inAct(() => {
      select.value = '1';
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(model.metadata.kale_ext).toEqual({
      options: { train_call: 1 },
      config: {}
    });
    await until(
      () => service.compile.mock.calls.length > calls && !ctx!.state.compiling
    );
    expect(service.compile.mock.calls[calls][0].options).toEqual({
      train_call: 1
    });
    await until(() =>
      panel.node
        .querySelector('dd[data-setting="nodes"]')
        ?.textContent?.startsWith('1 ')
    );
    expect(choice(panel)!.value).toBe('1');
  });

  it('reads the chosen call back from the notebook, and keeps one the notebook no longer has in view', async () => {
    ctx = await setup({ options: { train_call: 5 }, config: {} });
    const { panel, service } = ctx;
    expect(service.compile.mock.calls[0][0].options).toEqual({ train_call: 5 });
    const select = choice(panel)!;
    expect(select.value).toBe('5');
    expect(select.selectedOptions[0].text).toBe('Call 5 (not found)');
  });

  it('shows no choice for a notebook with one train() call', async () => {
    const nb = await setup();
    ctx = nb;
    nb.service.compile.mockResolvedValue(
      compileResult({
        train_calls: [{ cell: 2, line: 1 }],
        provenance: []
      })
    );
    await inAct(() => nb.state.updateForm({ nodes: '2' }));
    await until(
      () =>
        nb.service.compile.mock.calls.length > 1 &&
        !nb.state.compiling &&
        !nb.panel.node.querySelector('[aria-label="Read from the notebook"]')
    );
    expect(choice(nb.panel)).toBeNull();
  });
});
