import type { INotebookTracker } from '@jupyterlab/notebook';

import { KaleAPIError, KaleService } from '../api';
import type { JobsModel } from '../panel/jobs/jobs-model';
import { MAX_MESSAGES, RowActions } from '../panel/jobs/row-actions';
import { PanelState } from '../panel/state';
import type { Kale } from '../types';
import { compileResult, fakeNotebook, fakeService, fakeTracker } from './fakes';
import { until } from './helpers';

/**
 * A sweep runs what the panel shows; a row's Rerun is the job as the server
 * recorded it, its Stop keeps the job, its Edit and rerun loads the job's
 * recorded options; what each says shows at its row, not under Submit.
 */
function setup() {
  const nb = fakeNotebook();
  const service = {
    ...fakeService(),
    startSweep: jest.fn(),
    rerunJob: jest.fn(),
    resumeJob: jest.fn(),
    stopJob: jest.fn()
  };
  let n = 0;
  service.compile.mockImplementation(async (body: Kale.JobRequest) =>
    compileResult({
      parameters: { epochs: 6, lr: 0.1 },
      job_name: body.options?.name ?? `nb-name${++n}`
    })
  );
  const openLogs = jest.fn();
  const state = new PanelState({
    service: service as unknown as KaleService,
    tracker: fakeTracker(nb) as unknown as INotebookTracker,
    openLogs,
    compileDelay: 0,
    pollInterval: 1e6
  });
  return { ...nb, state, service, openLogs };
}

type Ctx = ReturnType<typeof setup>;

async function compiled(ctx: Ctx, times = 1): Promise<void> {
  await until(
    () => ctx.service.compile.mock.calls.length >= times && !ctx.state.compiling
  );
}

function refused(status: number, message: string): KaleAPIError {
  return new KaleAPIError(new Response(null, { status }), message);
}

const sweep = (name: string): Kale.ISweep =>
  ({
    name,
    status: 'Starting',
    search: 'grid',
    parallel: 1,
    trials: []
  }) as unknown as Kale.ISweep;

let ctx: Ctx;
afterEach(() => ctx?.state.dispose());

describe('a sweep from the panel', () => {
  it('sends every parameter set and the name the preview shows', async () => {
    ctx = setup();
    const { state, service } = ctx;
    await compiled(ctx);
    state.updateForm({ parameters: { epochs: '4' } });
    state.updateSweep({ params: { lr: '1e-3, 1e-2' } });
    await compiled(ctx, 2);
    expect(state.compile?.job_name).toBe('nb-name1');
    service.startSweep.mockResolvedValue(sweep('nb-name1'));
    await state.submit();
    const body = service.startSweep.mock.calls[0][0] as Kale.SweepRequest;
    expect(body.options?.parameters).toEqual({ epochs: '4' });
    expect(body.options?.name).toBe('nb-name1'); // the sweep's name: as shown
    expect(body.sweep.params).toEqual({ lr: '1e-3, 1e-2' });
    await compiled(ctx, 3);
    expect(state.compile?.job_name).toBe('nb-name2'); // the next one's
  });
});

describe('a sweep name too long for its trials', () => {
  it('is refused at the name field, never changed behind the preview', async () => {
    ctx = setup();
    const { state, service } = ctx;
    const long = 'a-notebook-with-a-rather-long-name-abcde'; // 39 characters
    service.compile.mockImplementation(async (body: Kale.JobRequest) =>
      compileResult({
        parameters: { epochs: 6, lr: 0.1 },
        job_name: body.options?.name ?? long
      })
    );
    await compiled(ctx);
    state.updateSweep({ params: { lr: '1e-3, 1e-2' } });
    const error = state.fieldErrors.find(e => e.field === 'name');
    expect(error?.message).toContain("a sweep's name is at most 36 characters");
    expect(state.submitBlocker).toBe('Fix the highlighted fields first');
    state.updateForm({ name: 'short-sweep' });
    expect(state.fieldErrors.find(e => e.field === 'name')).toBeUndefined();
  });
});

describe('a job row', () => {
  it("reruns the job the server recorded, never the form's state", async () => {
    ctx = setup();
    const { state, service, openLogs } = ctx;
    await compiled(ctx);
    state.updateForm({ name: 'my-run-1', volumes: [] });
    service.rerunJob.mockResolvedValue({
      name: 'nb-new',
      backend: 'local',
      warnings: []
    });
    expect(await state.rows.rerun('old-job')).toBe('nb-new');
    expect(service.rerunJob).toHaveBeenCalledWith('old-job');
    expect(service.submit).not.toHaveBeenCalled();
    expect(openLogs).toHaveBeenCalledWith('nb-new');
    expect(state.rows.message('old-job')).toBeUndefined();
  });

  it("resumes a job in its lineage and opens the new job's logs", async () => {
    ctx = setup();
    const { state, service, openLogs } = ctx;
    await compiled(ctx);
    service.resumeJob.mockResolvedValue({
      name: 'nb-next',
      backend: 'local',
      warnings: []
    });
    expect(await state.rows.resume('stopped-job')).toBe('nb-next');
    expect(service.resumeJob).toHaveBeenCalledWith('stopped-job');
    expect(service.rerunJob).not.toHaveBeenCalled();
    expect(openLogs).toHaveBeenCalledWith('nb-next');
    service.resumeJob.mockRejectedValue(
      refused(409, 'job a is Running: a job is resumed once it has ended')
    );
    expect(await state.rows.resume('a')).toBeNull();
    expect(state.rows.message('a')?.text).toBe(
      'job a is Running: a job is resumed once it has ended'
    );
  });

  it('shows a refused rerun or stop at its row, not under Submit', async () => {
    ctx = setup();
    const { state, service } = ctx;
    await compiled(ctx);
    service.rerunJob.mockRejectedValue(
      refused(409, 'job a cannot be rerun from here: no snapshot')
    );
    expect(await state.rows.rerun('a')).toBeNull();
    expect(state.rows.message('a')).toEqual({
      kind: 'error',
      text: 'job a cannot be rerun from here: no snapshot'
    });
    service.stopJob.mockRejectedValue(
      refused(
        409,
        'job b has ended already (Complete): there is nothing to stop'
      )
    );
    expect(await state.rows.stop('b')).toBe(false);
    expect(state.rows.message('b')?.text).toContain('has ended already');
    expect(state.actions.notice).toBeNull();
    state.rows.dismiss('a');
    expect(state.rows.message('a')).toBeUndefined();
  });

  it('stops a job and keeps it listed', async () => {
    ctx = setup();
    const { state, service } = ctx;
    await compiled(ctx);
    service.stopJob.mockResolvedValue({ name: 'run', status: 'Failed' });
    expect(await state.rows.stop('run')).toBe(true);
    expect(service.stopJob).toHaveBeenCalledWith('run');
    expect(service.deleteJob).not.toHaveBeenCalled();
  });

  it("loads a job's recorded options into the form, hidden env values named", async () => {
    ctx = setup();
    const { state } = ctx;
    await compiled(ctx);
    const job = {
      name: 'run-7',
      provenance: {
        'kale-ext.io/notebook': 'dir/nb.ipynb',
        'kale-ext.io/options': JSON.stringify({
          name: 'run-7',
          nodes: 4,
          parameters: { epochs: '3' },
          env: { TOKEN: '<redacted>', MODE: 'fast' }
        })
      }
    } as unknown as Kale.IJobInfo;
    state.editAndRerun(job);
    expect(state.form.name).toBe('');
    expect(state.form.nodes).toBe('4');
    expect(state.form.parameters).toEqual({ epochs: '3' });
    expect(state.form.env.map(r => [r.name, r.value])).toEqual([
      ['TOKEN', ''],
      ['MODE', 'fast']
    ]);
    expect(state.rows.message('run-7')).toEqual({
      kind: 'info',
      text: 'Its options are in the form; set TOKEN again (env values are not kept)'
    });
    const other = {
      name: 'elsewhere',
      provenance: { 'kale-ext.io/notebook': 'other.ipynb' }
    } as unknown as Kale.IJobInfo;
    state.editAndRerun(other);
    expect(state.rows.message('elsewhere')).toEqual({
      kind: 'error',
      text: "Open other.ipynb to edit this job's options"
    });
    expect(state.form.nodes).toBe('4'); // unchanged
  });
});

describe("a row's message", () => {
  function rows(maxMessages?: number): RowActions {
    return new RowActions({
      service: fakeService() as unknown as KaleService,
      jobs: {} as JobsModel,
      openLogs: jest.fn(),
      changed: jest.fn(),
      maxMessages
    });
  }

  it('is kept for the last maxMessages rows only, the oldest dropped', () => {
    const actions = rows(3);
    for (let i = 0; i < 1000; i++) {
      actions.say(`job-${i}`, 'info', `said ${i}`);
    }
    expect(actions.message('job-999')).toEqual({
      kind: 'info',
      text: 'said 999'
    });
    expect(actions.message('job-997')?.text).toBe('said 997');
    expect(actions.message('job-996')).toBeUndefined();
    expect(actions.message('job-0')).toBeUndefined();
  });

  it('is bounded by MAX_MESSAGES unless told otherwise', () => {
    const actions = rows();
    for (let i = 0; i <= MAX_MESSAGES; i++) {
      actions.say(`job-${i}`, 'error', 'refused');
    }
    expect(actions.message('job-0')).toBeUndefined();
    expect(actions.message('job-1')?.text).toBe('refused');
    expect(actions.message(`job-${MAX_MESSAGES}`)?.text).toBe('refused');
  });
});
