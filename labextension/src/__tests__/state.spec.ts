import type { INotebookTracker } from '@jupyterlab/notebook';

import type { KaleService } from '../api';
import { PanelState } from '../panel/state';
import type { Kale } from '../types';
import {
  compileResult,
  defaultsResponse,
  fakeNotebook,
  fakeService,
  fakeTracker
} from './fakes';
import { until } from './helpers';

function setup(metadata?: unknown) {
  const nb = fakeNotebook({ metadata });
  const service = fakeService();
  const confirm = jest.fn().mockResolvedValue(true);
  const editDefaults = jest.fn();
  const openLogs = jest.fn();
  const state = new PanelState({
    service: service as unknown as KaleService,
    tracker: fakeTracker(nb) as unknown as INotebookTracker,
    openLogs,
    confirm,
    editDefaults,
    compileDelay: 0,
    pollInterval: 1e6
  });
  return { ...nb, state, service, confirm, editDefaults, openLogs };
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

  it('remembers the sweep settings in the metadata, restored on reopen', async () => {
    ctx = setup({ options: { nodes: 2 }, config: {} });
    await compiled(ctx);
    const { state, model } = ctx;
    state.updateSweep({
      params: { lr: '0.1, 0.5' },
      parallel: '2',
      metric: 'loss',
      goal: 'min',
      earlyStop: true
    });
    expect(model.metadata.kale_ext).toEqual({
      options: { nodes: 2 },
      config: {},
      sweep: {
        params: { lr: '0.1, 0.5' },
        parallel: 2,
        metric: 'loss',
        goal: 'min',
        early_stop: true
      }
    });
    // a form change keeps the sweep; a half-typed count stays as typed
    state.updateForm({ nodes: '3' });
    state.updateSweep({ parallel: '2x' });
    expect(state.sweep.parallel).toBe('2x');
    expect(
      (model.metadata.kale_ext as { sweep: object }).sweep
    ).not.toHaveProperty('parallel');
    state.updateSweep({ parallel: '2' });
    const saved = JSON.parse(JSON.stringify(model.metadata.kale_ext));
    state.dispose();

    ctx = setup(saved); // the notebook opened again
    await compiled(ctx);
    expect(ctx.state.form.nodes).toBe('3');
    expect(ctx.state.sweep).toEqual({
      params: { lr: '0.1, 0.5' },
      search: 'grid',
      trials: '',
      parallel: '2',
      metric: 'loss',
      goal: 'min',
      earlyStop: true
    });
    expect(ctx.model.writes).toBe(0); // reading writes nothing

    // Undo (any edit of the metadata) comes back to the sweep; no sweep
    // left and an empty form leave no key behind.
    ctx.model.setMetadata('kale_ext', { options: {}, config: {} });
    expect(ctx.state.sweep.params).toEqual({});
    ctx.state.updateForm({ nodes: '' });
    expect('kale_ext' in ctx.model.metadata).toBe(false);
  });

  it('keeps a half-typed value the metadata cannot hold', async () => {
    ctx = setup();
    await compiled(ctx);
    ctx.state.updateForm({ nodes: '2x' });
    expect(ctx.state.form.nodes).toBe('2x');
    expect(ctx.state.fieldErrors.map(e => e.field)).toEqual(['nodes']);
    expect(ctx.state.submitBlocker).toMatch(/Fix the highlighted/);
  });

  it("shows the server's verdict on a parameter on its field", async () => {
    ctx = setup();
    await compiled(ctx);
    const { state, service } = ctx;
    const message =
      "parameters.epochs: expects an int (a whole number) like its default 6, not 'abc'";
    service.compile.mockResolvedValue(
      compileResult({
        ok: false,
        errors: [
          {
            severity: 'error',
            message,
            cell: null,
            code: 'config',
            field: 'parameters.epochs'
          }
        ]
      })
    );
    state.updateForm({ parameters: { epochs: 'abc' } });
    // no verdict of its own: the text goes to the server as typed
    expect(state.fieldErrors).toEqual([]);
    await compiled(ctx, 2);
    expect(service.compile.mock.calls[1][0].options.parameters).toEqual({
      epochs: 'abc'
    });
    expect(state.fieldErrors).toEqual([
      {
        field: 'parameters.epochs',
        message: "expects an int (a whole number) like its default 6, not 'abc'"
      }
    ]);
    expect(state.submitBlocker).toMatch(/Fix the highlighted/);

    service.compile.mockResolvedValue(compileResult());
    state.updateForm({ parameters: { epochs: '7' } });
    await compiled(ctx, 3);
    expect(state.fieldErrors).toEqual([]);
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
    service.submit.mockImplementation(async (body: Kale.JobRequest) => ({
      name: body.options?.name ?? 'nb-abcde',
      backend: 'local',
      warnings: []
    }));
    await state.submit();
    expect(service.submit.mock.calls[0][0]).toEqual({
      path: 'dir/nb.ipynb',
      options: {}
    });
    expect(state.actions.notice?.text).toBe('Submitted nb-abcde (local)');
    expect(state.actions.submitting).toBe(false);
    await compiled(ctx, 2); // checked again after a submit (a new name)

    state.updateForm({ name: 'mine', nodes: '2' }); // the model is now dirty
    await compiled(ctx, 3);
    await state.submit();
    const body = service.submit.mock.calls[1][0];
    expect(body.notebook).toEqual(model.toJSON());
    expect(body.options).toEqual({ name: 'mine', nodes: 2 });
    await compiled(ctx, 4);
  });

  it('keeps the name the preview shows for the submit, then previews a new one', async () => {
    ctx = setup();
    const { state, service } = ctx;
    let n = 0;
    // As the server: the name asked for, else a new one each time.
    service.compile.mockImplementation(async (body: Kale.JobRequest) =>
      compileResult({ job_name: body.options?.name ?? `nb-name${++n}` })
    );
    await compiled(ctx);
    expect(state.compile?.job_name).toBe('nb-name1');

    // Checked again (a change): the same name.
    state.updateForm({ nodes: '3' });
    expect(state.submitNote).toBe('Checking the notebook…');
    await compiled(ctx, 2);
    expect(service.compile.mock.calls[1][0].options).toEqual({
      name: 'nb-name1',
      nodes: 3
    });
    expect(state.compile?.job_name).toBe('nb-name1');
    expect(state.form.name).toBe(''); // not the user's: not in the metadata
    expect(ctx.model.metadata.kale_ext).toEqual({
      options: { nodes: 3 },
      config: {}
    });

    await state.submit();
    expect(service.submit.mock.calls[0][0].options).toEqual({
      name: 'nb-name1',
      nodes: 3
    });
    await compiled(ctx, 3);
    expect(state.compile?.job_name).toBe('nb-name2'); // the next job's

    // A name the user types wins.
    state.updateForm({ name: 'mine' });
    await compiled(ctx, 4);
    expect(service.compile.mock.calls[3][0].options.name).toBe('mine');
  });

  it('a Submit during a check submits what the check found', async () => {
    ctx = setup();
    await compiled(ctx);
    const { state, service } = ctx;
    state.updateForm({ nodes: '2' }); // checked a little later
    // Submit stays enabled (a click is never lost to a check starting) ...
    expect(state.submitBlocker).toBe('');
    expect(state.submitNote).toBe('Checking the notebook…');
    const submitted = state.submit();
    // ... and, clicked, waits for the check.
    expect(state.submitBlocker).toBe('Submitting…');
    await submitted;
    expect(service.compile.mock.calls[1][0].options.nodes).toBe(2);
    expect(service.submit).toHaveBeenCalledTimes(1);
    expect(service.submit.mock.calls[0][0].options.nodes).toBe(2);
    expect(state.submitNote).toBe('');
  });

  it('keeps Submit enabled through a check the kernel starts, and a click then submits', async () => {
    ctx = setup();
    await compiled(ctx);
    const { state, service, model } = ctx;
    let answer: (result: Kale.ICompileResult) => void = () => undefined;
    service.compile.mockImplementationOnce(
      () => new Promise(resolve => (answer = resolve))
    );
    // The kernel connects: JupyterLab writes its language into the notebook.
    model.setMetadata('language_info', { name: 'python' });
    await until(() => state.compiling);
    expect(state.submitBlocker).toBe('');
    expect(state.submitNote).toBe('Checking the notebook…');
    const submitted = state.submit();
    expect(service.submit).not.toHaveBeenCalled(); // not before the answer
    answer(compileResult());
    await submitted;
    expect(service.submit).toHaveBeenCalledTimes(1);
    expect(state.actions.notice?.text).toMatch(/^Submitted nb-abcde/);
  });

  it('says why a Submit made during a check did not go', async () => {
    ctx = setup();
    await compiled(ctx);
    const { state, service } = ctx;
    service.compile.mockResolvedValueOnce(
      compileResult({
        ok: false,
        errors: [{ severity: 'error', message: 'bad', cell: 0 }]
      })
    );
    state.updateForm({ nodes: '2' });
    await state.submit();
    expect(service.submit).not.toHaveBeenCalled();
    expect(state.actions.notice).toEqual({
      kind: 'error',
      text: 'Not submitted: Fix the errors listed above first'
    });
  });

  it('lets a kept name go when the server refuses it', async () => {
    ctx = setup();
    const { state, service } = ctx;
    service.compile.mockResolvedValueOnce(
      compileResult({ job_name: 'a-very-long-notebook-name-abcde' })
    );
    await compiled(ctx);
    service.compile.mockResolvedValueOnce(
      compileResult({
        ok: false,
        errors: [
          {
            severity: 'error',
            message: 'name: too long for 1000 nodes',
            cell: null,
            field: 'name'
          }
        ]
      })
    );
    service.compile.mockResolvedValueOnce(
      compileResult({ job_name: 'a-very-long-notebook-fghij' })
    );
    state.updateForm({ nodes: '1000' });
    await compiled(ctx, 3);
    expect(service.compile.mock.calls[1][0].options.name).toBe(
      'a-very-long-notebook-name-abcde'
    );
    expect(service.compile.mock.calls[2][0].options.name).toBeUndefined();
    expect(state.compile?.job_name).toBe('a-very-long-notebook-fghij');
    expect(state.fieldErrors).toEqual([]);
  });

  it('leads somewhere after a submit: the logs open, the row comes into view, the job stays in view', async () => {
    ctx = setup();
    await compiled(ctx);
    const { state, service, openLogs } = ctx;
    expect(state.currentJob).toBeNull();
    await state.submit();
    // in place of the notebook's last submit's logs
    expect(openLogs).toHaveBeenCalledWith('nb-abcde', ctx.panel.context.path);
    expect(state.jobList.revealing).toBe('nb-abcde');
    expect(state.currentJob).toEqual({ name: 'nb-abcde', job: undefined });

    const listed = { name: 'nb-abcde', status: 'Running' } as Kale.IJobInfo;
    state.jobList.jobs = [listed];
    expect(state.currentJob).toEqual({ name: 'nb-abcde', job: listed });

    // A failed submit: its notice, no logs, the last job still current.
    service.submit.mockRejectedValue(new Error('the cluster said no'));
    await compiled(ctx, 2);
    await state.submit();
    expect(state.actions.notice).toMatchObject({
      kind: 'error',
      text: 'the cluster said no'
    });
    expect(openLogs).toHaveBeenCalledTimes(1);
    expect(state.currentJob?.name).toBe('nb-abcde');

    // Changing the form clears what the last submit said.
    state.updateForm({ nodes: '2' });
    expect(state.actions.notice).toBeNull();
  });

  it('drops a "Submitted" notice once the job cannot be submitted as it stands', async () => {
    ctx = setup();
    await compiled(ctx);
    const { state, service } = ctx;
    await state.submit();
    expect(state.actions.notice?.text).toMatch(/^Submitted/);
    await compiled(ctx, 2);
    service.compile.mockResolvedValue({
      ok: false,
      errors: [{ severity: 'error', message: 'bad', cell: 0 }],
      warnings: []
    });
    await state.settingsChanged();
    await compiled(ctx, 3);
    expect(state.actions.notice).toBeNull();
  });

  it('keeps the "Submitted" notice when the name typed is taken by the job it announces', async () => {
    ctx = setup();
    await compiled(ctx);
    const { state, service } = ctx;
    state.setVisible(true); // the jobs list is polled
    await until(() => state.jobList.jobs);
    state.updateForm({ name: 'my-run' });
    service.submit.mockResolvedValue({
      name: 'my-run',
      backend: 'local',
      warnings: []
    });
    service.listJobs.mockResolvedValue([{ name: 'my-run', status: 'Running' }]);
    const before = service.compile.mock.calls.length;
    await state.submit();
    await until(() => state.fieldErrors.some(e => e.field === 'name'));
    await compiled(ctx, before + 1); // checked again after the submit
    expect(state.actions.notice?.text).toBe('Submitted my-run (local)');
    state.updateForm({ nodes: '2' }); // a change of the form: it goes
    expect(state.actions.notice).toBeNull();
  });

  it('checks the volumes for the backend the jobs go to', async () => {
    ctx = setup();
    await compiled(ctx);
    ctx.state.updateForm({ volumes: ['pvc:data:/data'] });
    expect(ctx.state.fieldErrors).toEqual([]); // no backend known yet
    await ctx.state.load(); // local: a claim needs its folder here
    expect(ctx.state.fieldErrors.map(e => e.field)).toEqual(['volumes.0']);
    ctx.service.getBackend.mockResolvedValue({
      name: 'kubernetes',
      reason: 'r',
      namespace: 'ml'
    });
    await ctx.state.settingsChanged();
    expect(ctx.state.fieldErrors).toEqual([]);
  });

  it('deletes a job only once confirmed', async () => {
    ctx = setup();
    await compiled(ctx);
    ctx.state.jobList.jobs = [{ name: 'a' }, { name: 'b' }] as Kale.IJobInfo[];
    ctx.confirm.mockResolvedValueOnce(false);
    await ctx.state.actions.delete('a');
    expect(ctx.service.deleteJob).not.toHaveBeenCalled();
    expect(ctx.state.actions.notice).toBeNull();
    await ctx.state.actions.delete('a');
    expect(ctx.service.deleteJob).toHaveBeenCalledWith('a');
    expect(ctx.state.jobList.jobs?.map(j => j.name)).toEqual(['b']);
    expect(ctx.state.actions.notice).toEqual({
      kind: 'info',
      text: 'Deleted a'
    });
  });

  it("sets the tags of the active cell from the server's grammar", async () => {
    ctx = setup();
    await ctx.state.load();
    const { state, cell, model } = ctx;
    cell.model.tags = ['pipeline-parameters', 'other'];
    state.roles.choose('imports');
    expect(model.undoableWrites).toBe(1); // a step of the notebook's Undo
    expect(cell.model.tags).toEqual(['other', 'imports']);
    expect(state.activeCell).toEqual({
      index: 0,
      type: 'code',
      tags: ['other', 'imports']
    });

    // The change can be taken back.
    expect(state.roles.change).toMatchObject({
      from: 'parameters',
      to: 'imports'
    });
    state.roles.undo();
    expect(cell.model.tags).toEqual(['pipeline-parameters', 'other']);
    expect(state.roles.change).toBeNull();
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
    const mine = defaultsResponse({
      backend: ['kubernetes', 'JupyterLab settings'],
      nodes: [2, 'JupyterLab settings']
    });
    service.getDefaults.mockResolvedValue(mine);
    service.compile.mockResolvedValue(compileResult({ nodes: 2 }));
    let emitted = 0;
    state.stateChanged.connect(() => emitted++);

    await state.settingsChanged();
    expect(service.getBackend).toHaveBeenCalledTimes(2);
    expect(service.listTags).toHaveBeenCalledTimes(1); // settings do not change them
    expect(state.server.backend?.name).toBe('kubernetes');
    expect(state.server.defaults).toEqual(mine);
    expect(emitted).toBeGreaterThan(0); // the view renders again

    await compiled(ctx, 2);
    expect(service.compile).toHaveBeenCalledTimes(2);
    // The same form: what changed is on the server's side.
    expect(service.compile.mock.calls[1][0].options).toEqual({});
    expect(state.compile?.nodes).toBe(2);
  });

  it('takes the only runtime as the default, else the one chosen or resolved', async () => {
    ctx = setup();
    const runtime = (name: string) => ({ name }) as Kale.IRuntime;
    ctx.service.listRuntimes.mockResolvedValue([runtime('solo')]);
    ctx.service.compile.mockResolvedValue(compileResult({ runtime: '' }));
    await ctx.state.load();
    await compiled(ctx);
    expect(ctx.state.runtime?.name).toBe('solo');

    ctx.service.listRuntimes.mockResolvedValue([runtime('a'), runtime('b')]);
    await ctx.state.load();
    expect(ctx.state.runtime).toBeUndefined();
    ctx.state.updateForm({ runtime: 'b' });
    expect(ctx.state.runtime?.name).toBe('b');
  });

  it('says why Submit is disabled without a notebook', () => {
    const service = fakeService();
    const state = new PanelState({
      service: service as unknown as KaleService,
      tracker: fakeTracker(null) as unknown as INotebookTracker,
      openLogs: jest.fn(),
      pollInterval: 1e6
    });
    expect(state.notebook).toBeNull();
    expect(state.submitBlocker).toBe('Open a notebook first');
    expect(state.canEditDefaults).toBe(false); // no editor to open
    state.dispose();
  });

  it('opens the defaults editor through its callback', () => {
    ctx = setup();
    expect(ctx.state.canEditDefaults).toBe(true);
    ctx.state.editDefaults();
    expect(ctx.editDefaults).toHaveBeenCalledTimes(1);
  });
});
