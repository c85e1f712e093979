import type { INotebookTracker } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';

import { KaleAPIError, KaleService } from '../api';
import { PanelState } from '../panel/state';
import type { Kale } from '../types';
import { until } from './helpers';

const copy = <T>(v: T): T =>
  v === undefined ? v : JSON.parse(JSON.stringify(v));

/**
 * A notebook model with just what the panel uses.
 */
class FakeModel {
  metadataChanged = new Signal<this, { key: string }>(this);
  contentChanged = new Signal<this, void>(this);
  dirty = false;
  metadata: { [key: string]: unknown } = {};
  sharedModel = {};
  writes = 0;
  getMetadata(key: string): unknown {
    return copy(this.metadata[key]);
  }
  setMetadata(key: string, value: unknown): void {
    this.writes++;
    this.metadata[key] = copy(value);
    this.dirty = true;
    this.metadataChanged.emit({ key });
    this.contentChanged.emit();
  }
  deleteMetadata(key: string): void {
    this.writes++;
    delete this.metadata[key];
    this.metadataChanged.emit({ key });
  }
  toJSON() {
    return {
      cells: [],
      metadata: copy(this.metadata),
      nbformat: 4,
      nbformat_minor: 5
    };
  }
}

class FakeCellModel {
  type = 'code';
  id = 'c1';
  metadataChanged = new Signal<this, unknown>(this);
  tags: string[] | undefined;
  getMetadata(key: string) {
    return key === 'tags' ? copy(this.tags) : undefined;
  }
  setMetadata(key: string, value: string[]) {
    this.tags = copy(value);
    this.metadataChanged.emit({});
  }
  deleteMetadata() {
    this.tags = undefined;
    this.metadataChanged.emit({});
  }
}

/**
 * `GET defaults`: built in, except what `set` says (field: [value, source]).
 */
function defaults(
  set: { [field: string]: [unknown, string] } = {}
): Kale.IDefaults {
  const result = {
    defaults: {
      backend: 'auto',
      namespace: null,
      runtime: 'torch-distributed',
      image: null,
      pip_index_urls: [],
      nodes: null,
      cpu: null,
      memory: null,
      gpu: null
    } as { [field: string]: unknown },
    sources: {} as { [field: string]: string }
  };
  for (const field of Object.keys(result.defaults)) {
    result.sources[field] = 'built in';
  }
  for (const [field, [value, source]] of Object.entries(set)) {
    result.defaults[field] = value;
    result.sources[field] = source;
  }
  return result as unknown as Kale.IDefaults;
}

function setup(metadata?: unknown) {
  const model = new FakeModel();
  if (metadata) {
    model.metadata.kale_ext = metadata;
  }
  const cell = { model: new FakeCellModel(), isDisposed: false };
  const notebook = {
    widgets: [cell],
    mode: 'edit',
    activeCellIndex: -1,
    deselectAll: jest.fn(),
    scrollToItem: jest.fn().mockResolvedValue(undefined)
  };
  const panel = {
    id: 'nb-1',
    model,
    content: notebook,
    context: {
      ready: Promise.resolve(),
      localPath: 'dir/nb.ipynb',
      path: 'dir/nb.ipynb'
    },
    disposed: new Signal({}),
    isDisposed: false
  };
  const tracker = {
    currentWidget: panel,
    activeCell: cell,
    currentChanged: new Signal({}),
    activeCellChanged: new Signal({}),
    widgetAdded: new Signal({}),
    forEach: (fn: (p: unknown) => void) => fn(panel)
  };
  const compileResult: Kale.ICompileResult = {
    ok: true,
    errors: [],
    warnings: [],
    function_name: 'nb',
    parameters: { epochs: 6 },
    packages: ['torch==2.13.0'],
    runtime: 'torch-distributed',
    trainjob_yaml: 'kind: TrainJob\n'
  };
  const service = {
    compile: jest.fn().mockResolvedValue(compileResult),
    submit: jest
      .fn()
      .mockResolvedValue({ name: 'nb-abcde', backend: 'local', warnings: [] }),
    listJobs: jest.fn().mockResolvedValue([]),
    deleteJob: jest.fn().mockResolvedValue(undefined),
    getBackend: jest
      .fn()
      .mockResolvedValue({ name: 'local', reason: 'r', namespace: null }),
    listRuntimes: jest.fn().mockResolvedValue([]),
    getDefaults: jest.fn().mockResolvedValue(defaults()),
    listTags: jest.fn().mockResolvedValue([
      { tag: 'imports', role: 'imports', help: '' },
      { tag: 'skip', role: 'skip', help: '' },
      { tag: 'pipeline-parameters', role: 'parameters', help: '' }
    ])
  };
  const confirm = jest.fn().mockResolvedValue(true);
  const activate = jest.fn();
  const editDefaults = jest.fn();
  const state = new PanelState({
    service: service as unknown as KaleService,
    tracker: tracker as unknown as INotebookTracker,
    openLogs: jest.fn(),
    confirm,
    activate,
    editDefaults,
    compileDelay: 0,
    pollInterval: 1e6
  });
  return {
    state,
    model,
    service,
    panel,
    notebook,
    cell,
    confirm,
    activate,
    editDefaults,
    compileResult
  };
}

/**
 * Wait until the notebook was checked `times` times and the answer is in.
 */
async function compiled(
  ctx: ReturnType<typeof setup>,
  times = 1
): Promise<void> {
  await until(
    () => ctx.service.compile.mock.calls.length >= times && !ctx.state.compiling
  );
}

describe('PanelState', () => {
  let ctx: ReturnType<typeof setup>;
  afterEach(() => ctx?.state.dispose());

  it('reads the form from the notebook metadata and compiles its JSON', async () => {
    ctx = setup({
      options: { nodes: 2, parameters: { epochs: 1 } },
      config: {}
    });
    await compiled(ctx);
    const { state, service, model } = ctx;
    expect(state.notebook).toBe(ctx.panel);
    expect(state.form.nodes).toBe('2');
    expect(service.compile).toHaveBeenCalledTimes(1);
    const [body] = service.compile.mock.calls[0];
    expect(body.notebook).toEqual(model.toJSON());
    expect(body.path).toBe('dir/nb.ipynb'); // names the job; the JSON is the content
    expect(body.options).toEqual({ nodes: 2, parameters: { epochs: 1 } });
    expect(state.compile?.ok).toBe(true);
    expect(state.submitBlocker).toBe('');
    expect(model.writes).toBe(0); // reading writes nothing
  });

  it('writes each change through the model and compiles again', async () => {
    ctx = setup();
    await compiled(ctx);
    const { state, model, service } = ctx;
    state.updateForm({ nodes: '3', cpuLimit: '2' });
    expect(model.metadata.kale_ext).toEqual({
      options: { nodes: 3 },
      config: { limits: { cpu: '2' } }
    });
    await compiled(ctx, 2);
    expect(service.compile).toHaveBeenCalledTimes(2);
    expect(service.compile.mock.calls[1][0].options.nodes).toBe(3);

    // Undo (or any edit of the metadata) comes back to the form.
    model.deleteMetadata('kale_ext');
    expect(state.form.nodes).toBe('');
    expect(state.form.cpuLimit).toBe('');

    // An empty form leaves no metadata behind.
    state.updateForm({ nodes: '3' });
    state.updateForm({ nodes: '' });
    expect('kale_ext' in model.metadata).toBe(false);
  });

  it('keeps a half-typed value the metadata cannot hold', async () => {
    ctx = setup();
    await compiled(ctx);
    ctx.state.updateForm({ nodes: '2x' });
    expect(ctx.state.form.nodes).toBe('2x');
    expect(ctx.state.fieldErrors.map(e => e.field)).toEqual(['nodes']);
    expect(ctx.state.submitBlocker).toMatch(/Fix the highlighted/);
  });

  it('blocks Submit while the notebook does not compile', async () => {
    ctx = setup();
    ctx.service.compile.mockResolvedValue({
      ok: false,
      errors: [{ severity: 'error', message: 'bad', cell: 0 }],
      warnings: []
    });
    await compiled(ctx);
    expect(ctx.state.submitBlocker).toMatch(/Fix the errors/);
    await ctx.state.submit();
    expect(ctx.service.submit).not.toHaveBeenCalled();
  });

  it('submits the path of a saved notebook, else its JSON', async () => {
    ctx = setup();
    await compiled(ctx);
    const { state, service, model } = ctx;
    await state.submit();
    expect(service.submit.mock.calls[0][0]).toEqual({
      path: 'dir/nb.ipynb',
      options: {}
    });
    expect(state.notice?.text).toBe('Submitted nb-abcde (local)');

    state.updateForm({ name: 'mine', nodes: '2' }); // the model is now dirty
    await compiled(ctx, 2);
    await state.submit();
    const body = service.submit.mock.calls[1][0];
    expect(body.notebook).toEqual(model.toJSON());
    expect(body.options).toEqual({ name: 'mine', nodes: 2 });

    // Rerun: the same notebook and options, a new name.
    const job = { name: 'nb-abcde' } as Kale.IJobInfo;
    service.submit.mockResolvedValue({
      name: 'mine',
      backend: 'local',
      warnings: []
    });
    await state.submit();
    expect(state.canRerun({ name: 'mine' } as Kale.IJobInfo)).toBe(true);
    await state.rerun({ name: 'mine' } as Kale.IJobInfo);
    expect(service.submit.mock.calls[3][0]).toEqual({
      notebook: model.toJSON(),
      path: 'dir/nb.ipynb',
      options: { nodes: 2 }
    });
    expect(state.canRerun({ ...job, name: 'unknown' })).toBe(false);
  });

  it('reruns a job submitted elsewhere from its provenance', async () => {
    ctx = setup();
    await compiled(ctx);
    const job = {
      name: 'cli-job',
      provenance: {
        'kale-ext.io/notebook': 'dir/nb.ipynb',
        'kale-ext.io/options': '{"nodes": 4, "name": "cli-job"}'
      }
    } as unknown as Kale.IJobInfo;
    expect(ctx.state.canRerun(job)).toBe(true);
    await ctx.state.rerun(job);
    expect(ctx.service.submit.mock.calls[0][0]).toEqual({
      path: 'dir/nb.ipynb',
      options: { nodes: 4 }
    });
  });

  it("shows the server's message and diagnostics when a submit fails", async () => {
    ctx = setup();
    await compiled(ctx);
    const diagnostic = {
      severity: 'error',
      message: 'x',
      cell: 2
    } as Kale.IDiagnostic;
    ctx.service.submit.mockRejectedValue(
      new KaleAPIError(
        new Response(null, { status: 422 }),
        'does not compile',
        [diagnostic]
      )
    );
    await ctx.state.submit();
    expect(ctx.state.notice).toEqual({
      kind: 'error',
      text: 'does not compile',
      diagnostics: [diagnostic]
    });
    expect(ctx.state.submitting).toBe(false);
  });

  it('deletes a job only once confirmed', async () => {
    ctx = setup();
    await compiled(ctx);
    ctx.state.jobList.jobs = [{ name: 'a' }, { name: 'b' }] as Kale.IJobInfo[];
    ctx.confirm.mockResolvedValueOnce(false);
    await ctx.state.deleteJob('a');
    expect(ctx.service.deleteJob).not.toHaveBeenCalled();
    await ctx.state.deleteJob('a');
    expect(ctx.service.deleteJob).toHaveBeenCalledWith('a');
    expect(ctx.state.jobList.jobs?.map(j => j.name)).toEqual(['b']);
  });

  it('sets the tags of the active cell (one role at a time)', async () => {
    ctx = setup();
    await ctx.state.load();
    const { state, cell } = ctx;
    cell.model.tags = ['pipeline-parameters', 'other'];
    state.toggleTag('imports');
    expect(cell.model.tags).toEqual(['other', 'imports']);
    expect(state.activeCell).toEqual({
      index: 0,
      type: 'code',
      tags: ['other', 'imports']
    });
    state.toggleTag('imports');
    expect(cell.model.tags).toEqual(['other']);
  });

  it("selects a diagnostic's cell, by id first", async () => {
    ctx = setup();
    await compiled(ctx);
    await ctx.state.selectCell({
      severity: 'error',
      message: '',
      cell: 5,
      cell_id: 'c1'
    });
    expect(ctx.activate).toHaveBeenCalledWith(ctx.panel);
    expect(ctx.notebook.activeCellIndex).toBe(0);
    expect(ctx.notebook.mode).toBe('command');
    expect(ctx.notebook.scrollToItem).toHaveBeenCalledWith(0, 'center');
  });

  it('loads the backend, runtimes and tags, and says what failed', async () => {
    ctx = setup();
    ctx.service.listRuntimes.mockRejectedValue(new Error('no server'));
    await ctx.state.load();
    expect(ctx.state.backend?.name).toBe('local');
    expect(ctx.state.tags).toHaveLength(3);
    expect(ctx.state.loadError).toBe('no server');
  });

  it('loads the defaults with the rest', async () => {
    ctx = setup();
    const mine = defaults({ memory: ['6Gi', 'JupyterLab settings'] });
    ctx.service.getDefaults.mockResolvedValue(mine);
    await ctx.state.load();
    expect(ctx.service.getDefaults).toHaveBeenCalledTimes(1);
    expect(ctx.state.defaults).toEqual(mine);
    expect(ctx.state.defaultsError).toBe('');
    expect(ctx.state.loadError).toBe('');
  });

  it("shows the server's message when a setting is invalid", async () => {
    ctx = setup();
    const message =
      "defaults.cpu: '4x' is not a Kubernetes quantity (set in the JupyterLab settings)";
    ctx.service.getDefaults.mockRejectedValue(
      new KaleAPIError(
        new Response(null, { status: 400 }),
        message,
        [],
        'defaults.cpu'
      )
    );
    await ctx.state.load();
    expect(ctx.state.defaultsError).toBe(message);
    expect(ctx.state.loadError).toBe(message);
    expect(ctx.state.backend?.name).toBe('local'); // the rest still loads
    expect(ctx.state.tags).toHaveLength(3);

    // Fixed in the settings: the error goes.
    ctx.service.getDefaults.mockResolvedValue(defaults());
    await ctx.state.settingsChanged();
    expect(ctx.state.defaultsError).toBe('');
    expect(ctx.state.loadError).toBe('');
    expect(ctx.state.defaults).toEqual(defaults());
  });

  it('loads the backend and defaults again and recompiles when the settings change', async () => {
    ctx = setup();
    await ctx.state.load();
    await compiled(ctx);
    const { state, service } = ctx;
    expect(service.compile).toHaveBeenCalledTimes(1);
    expect(service.getBackend).toHaveBeenCalledTimes(1);

    // The user sets the backend and the nodes in JupyterLab's settings: the
    // server answers with them, and the preview follows.
    service.getBackend.mockResolvedValue({
      name: 'kubernetes',
      reason: 'set in the JupyterLab settings',
      namespace: 'team'
    });
    const mine = defaults({
      backend: ['kubernetes', 'JupyterLab settings'],
      nodes: [2, 'JupyterLab settings']
    });
    service.getDefaults.mockResolvedValue(mine);
    service.compile.mockResolvedValue({ ...ctx.compileResult, nodes: 2 });
    let emitted = 0;
    state.stateChanged.connect(() => emitted++);

    await state.settingsChanged();
    expect(service.getBackend).toHaveBeenCalledTimes(2);
    expect(service.getDefaults).toHaveBeenCalledTimes(2);
    expect(service.listRuntimes).toHaveBeenCalledTimes(2); // the backend's
    expect(service.listTags).toHaveBeenCalledTimes(1); // settings do not change them
    expect(state.backend?.name).toBe('kubernetes');
    expect(state.defaults).toEqual(mine);
    expect(emitted).toBeGreaterThan(0);

    await compiled(ctx, 2);
    expect(service.compile).toHaveBeenCalledTimes(2);
    // The same form: what changed is on the server's side.
    expect(service.compile.mock.calls[1][0].options).toEqual({});
    expect(state.compile?.nodes).toBe(2);
  });

  it('keeps the answer of the last load when loads overlap', async () => {
    ctx = setup();
    const { state, service } = ctx;
    let first!: (d: Kale.IDefaults) => void;
    service.getDefaults.mockReturnValueOnce(
      new Promise<Kale.IDefaults>(resolve => (first = resolve))
    );
    const older = state.load();
    const latest = defaults({ runtime: ['site', 'server configuration'] });
    service.getDefaults.mockResolvedValueOnce(latest);
    await state.settingsChanged();
    first(defaults());
    await older;
    expect(state.defaults).toEqual(latest);
    expect(state.tags).toHaveLength(3); // the first load's tags still count
  });

  it('opens the defaults editor through its callback', () => {
    ctx = setup();
    expect(ctx.state.canEditDefaults).toBe(true);
    ctx.state.editDefaults();
    expect(ctx.editDefaults).toHaveBeenCalledTimes(1);
  });
});
