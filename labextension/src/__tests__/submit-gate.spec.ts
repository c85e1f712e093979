import type { NotebookPanel } from '@jupyterlab/notebook';

import type { KaleService } from '../api';
import type { IFieldError } from '../form/errors';
import { emptySweep } from '../form/sweep';
import { JobActions } from '../panel/jobs/job-actions';
import { JobsModel } from '../panel/jobs/jobs-model';
import { SubmitGate } from '../panel/jobs/submit-gate';
import { CompileCycle } from '../panel/preview/compile-cycle';
import type { Kale } from '../types';
import { compileResult, fakeService } from './fakes';
import { until } from './helpers';

const NOTEBOOK = { context: { path: 'a/nb.ipynb' } } as NotebookPanel;
const BODY = { path: 'a/nb.ipynb', options: {} } as Kale.JobRequest;

function setup(
  options: { notebook?: NotebookPanel | null; fieldErrors?: IFieldError[] } = {}
) {
  const service = fakeService();
  const jobs = new JobsModel({
    service: service as unknown as KaleService,
    pollInterval: 1e6
  });
  const actions = new JobActions({
    service: service as unknown as KaleService,
    jobs,
    openLogs: jest.fn(),
    changed: jest.fn()
  });
  const compiler = new CompileCycle({
    service: service as unknown as KaleService,
    request: () => BODY,
    changed: jest.fn(),
    delay: 0
  });
  const submitted = jest.fn();
  const gate = new SubmitGate({
    actions,
    compiler,
    notebook: () =>
      options.notebook === undefined ? NOTEBOOK : options.notebook,
    fieldErrors: () => options.fieldErrors ?? [],
    sweep: () => emptySweep(),
    request: () => BODY,
    submitted,
    changed: jest.fn()
  });
  const checked = async () => {
    compiler.now();
    await until(() => !compiler.pending);
  };
  const dispose = () => {
    compiler.dispose();
    jobs.dispose();
  };
  return { service, actions, compiler, gate, submitted, checked, dispose };
}

describe('SubmitGate', () => {
  let ctx: ReturnType<typeof setup> | undefined;
  afterEach(() => ctx?.dispose());

  it.each([
    [
      'no notebook',
      { notebook: null },
      compileResult(),
      'Open a notebook first'
    ],
    [
      'a field to fix',
      { fieldErrors: [{ field: 'nodes', message: 'bad' }] },
      compileResult(),
      'Fix the highlighted fields first'
    ],
    [
      'a notebook that does not compile',
      {},
      compileResult({ ok: false }),
      'Fix the errors listed above first'
    ],
    ['a notebook that compiles', {}, compileResult(), '']
  ])('with %s: the blocker it says', async (_, options, answer, blocker) => {
    ctx = setup(options as Parameters<typeof setup>[0]);
    ctx.service.compile.mockResolvedValue(answer);
    await ctx.checked();
    expect(ctx.gate.blocker).toBe(blocker);
    expect(ctx.gate.note).toBe('');
  });

  it('is disabled until the first check is in', () => {
    ctx = setup();
    expect(ctx.gate.blocker).toBe('Checking the notebook…');
  });

  it('stays enabled through a check of a notebook that compiled; a click waits for it', async () => {
    ctx = setup();
    await ctx.checked();
    let answer: (result: Kale.ICompileResult) => void = () => undefined;
    ctx.service.compile.mockImplementationOnce(
      () => new Promise(resolve => (answer = resolve))
    );
    ctx.compiler.now(); // a check Submit did not start (the kernel's)
    expect(ctx.gate.blocker).toBe('');
    expect(ctx.gate.note).toBe('Checking the notebook…');
    const click = ctx.gate.submit();
    expect(ctx.gate.blocker).toBe('Submitting…');
    expect(ctx.gate.submitting).toBe(true);
    expect(ctx.service.submit).not.toHaveBeenCalled();
    answer(compileResult());
    await click;
    expect(ctx.service.submit).toHaveBeenCalledWith(BODY);
    expect(ctx.submitted).toHaveBeenCalledTimes(1);
    expect(ctx.gate.submitting).toBe(false);
  });

  it('says why a click during a check did not go', async () => {
    ctx = setup();
    await ctx.checked();
    ctx.service.compile.mockResolvedValueOnce(compileResult({ ok: false }));
    ctx.compiler.now();
    await ctx.gate.submit();
    expect(ctx.service.submit).not.toHaveBeenCalled();
    expect(ctx.submitted).not.toHaveBeenCalled();
    expect(ctx.actions.notice).toEqual({
      kind: 'error',
      text: 'Not submitted: Fix the errors listed above first'
    });
  });
});
