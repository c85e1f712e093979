import { KaleAPIError, KaleService } from '../api';
import { deleteJob, JobActions, submitJob } from '../panel/jobs/job-actions';
import { JobsModel } from '../panel/jobs/jobs-model';
import type { Kale } from '../types';
import { fakeService } from './fakes';

function setup() {
  const fake = fakeService();
  const service = fake as unknown as KaleService;
  const jobs = new JobsModel({ service, pollInterval: 1e6 });
  return { fake, service, jobs };
}

describe('submitJob', () => {
  let ctx: ReturnType<typeof setup>;
  afterEach(() => ctx.jobs.dispose());

  it('names the job, its backend and the warnings, and keeps the request', async () => {
    ctx = setup();
    ctx.fake.submit.mockResolvedValue({
      name: 'nb-abcde',
      backend: 'kubernetes',
      warnings: ['the image lacks numpy']
    });
    const body = { path: 'nb.ipynb', options: { nodes: 2 } };
    expect(await submitJob(ctx.service, ctx.jobs, body)).toEqual({
      kind: 'info',
      text: 'Submitted nb-abcde (kubernetes)',
      job: 'nb-abcde',
      details: ['the image lacks numpy']
    });
    expect(ctx.jobs.lastSubmitted).toBe('nb-abcde');
  });

  it("shows the server's message and diagnostics when a submit fails", async () => {
    ctx = setup();
    const diagnostic = {
      severity: 'error',
      message: 'x',
      cell: 2
    } as Kale.IDiagnostic;
    ctx.fake.submit.mockRejectedValue(
      new KaleAPIError(
        new Response(null, { status: 422 }),
        'does not compile',
        [diagnostic]
      )
    );
    expect(
      await submitJob(ctx.service, ctx.jobs, { path: 'nb.ipynb' })
    ).toEqual({
      kind: 'error',
      text: 'does not compile',
      diagnostics: [diagnostic]
    });
    expect(ctx.jobs.lastSubmitted).toBeNull();
  });
});

describe('deleteJob', () => {
  it("says what was deleted, or the server's message", async () => {
    const { fake, jobs } = setup();
    jobs.jobs = [{ name: 'a' }, { name: 'b' }] as Kale.IJobInfo[];
    expect(await deleteJob(jobs, 'a')).toEqual({
      kind: 'info',
      text: 'Deleted a'
    });
    expect(jobs.jobs?.map(j => j.name)).toEqual(['b']);

    fake.deleteJob.mockRejectedValue(new Error('job b does not exist'));
    expect(await deleteJob(jobs, 'b')).toEqual({
      kind: 'error',
      text: 'job b does not exist'
    });
    jobs.dispose();
  });
});

describe('JobActions', () => {
  function actions() {
    const { fake, service, jobs } = setup();
    const openLogs = jest.fn();
    const confirm = jest.fn().mockResolvedValue(true);
    const changed = jest.fn();
    const act = new JobActions({ service, jobs, openLogs, confirm, changed });
    return { fake, jobs, act, openLogs, confirm, changed };
  }

  it('opens the logs of a submitted job, brings its row in, keeps it current for its notebook', async () => {
    const { jobs, act, openLogs } = actions();
    expect(await act.submit({ path: 'a.ipynb' }, 'a.ipynb')).toBe(true);
    expect(openLogs).toHaveBeenCalledWith('nb-abcde', 'a.ipynb');
    expect(jobs.revealing).toBe('nb-abcde');
    expect(act.current('a.ipynb')?.name).toBe('nb-abcde');
    expect(act.current('b.ipynb')).toBeNull();
    expect(act.notice?.text).toBe('Submitted nb-abcde (local)');
    act.clearNotice();
    expect(act.notice).toBeNull();
    jobs.dispose();
  });

  it('drops a "Submitted" notice once the form cannot be submitted; says why a Submit did not go', async () => {
    const { jobs, act } = actions();
    await act.submit({ path: 'a.ipynb' }, 'a.ipynb');
    act.formChecked(true);
    expect(act.notice?.text).toBe('Submitted nb-abcde (local)');
    act.formChecked(false);
    expect(act.notice).toBeNull();

    act.refuse('Fix the highlighted fields first');
    const refused = {
      kind: 'error',
      text: 'Not submitted: Fix the highlighted fields first'
    };
    expect(act.notice).toEqual(refused);
    act.formChecked(false); // (an error stays until the form changes)
    expect(act.notice).toEqual(refused);
    jobs.dispose();
  });

  it('deletes only once confirmed', async () => {
    const { fake, jobs, act, confirm } = actions();
    confirm.mockResolvedValueOnce(false);
    await act.delete('a');
    expect(fake.deleteJob).not.toHaveBeenCalled();
    await act.delete('a');
    expect(fake.deleteJob).toHaveBeenCalledWith('a');
    expect(act.notice).toEqual({ kind: 'info', text: 'Deleted a' });
    jobs.dispose();
  });
});
