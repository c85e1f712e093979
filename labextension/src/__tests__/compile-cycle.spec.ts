import type { KaleService } from '../api';
import { CompileCycle } from '../panel/preview/compile-cycle';
import type { Kale } from '../types';
import { compileResult, fakeService } from './fakes';
import { until } from './helpers';

function setup(request: Kale.JobRequest | null = { path: 'nb.ipynb' }) {
  const service = fakeService();
  const changed = jest.fn();
  const cycle = new CompileCycle({
    service: service as unknown as KaleService,
    request: () => request,
    changed,
    delay: 0
  });
  return { service, changed, cycle };
}

describe('CompileCycle', () => {
  it('compiles, says so while it does, and keeps the answer', async () => {
    const { service, changed, cycle } = setup();
    cycle.now();
    expect(cycle.running).toBe(true);
    await until(() => !cycle.running);
    expect(service.compile.mock.calls[0][0]).toEqual({ path: 'nb.ipynb' });
    expect(cycle.result).toEqual(compileResult());
    expect(cycle.error).toBe('');
    expect(changed).toHaveBeenCalledTimes(2); // started, answered
    cycle.dispose();
  });

  it("shows the server's message when a compile fails", async () => {
    const { service, cycle } = setup();
    service.compile.mockRejectedValue(new Error('the server is gone'));
    cycle.now();
    await until(() => !cycle.running);
    expect(cycle.result).toBeNull();
    expect(cycle.error).toBe('the server is gone');
    cycle.dispose();
  });

  it('keeps only the answer of the latest compile', async () => {
    const { service, cycle } = setup();
    let older!: (r: Kale.ICompileResult) => void;
    service.compile.mockImplementationOnce(
      (_, signal: AbortSignal) =>
        new Promise(resolve => {
          older = resolve;
          expect(signal.aborted).toBe(false);
        })
    );
    service.compile.mockResolvedValueOnce(compileResult({ nodes: 2 }));
    cycle.now();
    cycle.now();
    await until(() => !cycle.running);
    older(compileResult({ nodes: 9 }));
    await Promise.resolve();
    expect(service.compile.mock.calls[0][1].aborted).toBe(true);
    expect(cycle.result?.nodes).toBe(2);
    cycle.dispose();
  });

  it('keeps what the last compile that compiled knew (parameters, packages)', async () => {
    const { service, cycle } = setup();
    cycle.now();
    await until(() => !cycle.running);
    const good = cycle.result;
    expect(cycle.lastCompiled).toBe(good);

    // A cell breaks: no function, no parameters in the answer.
    service.compile.mockResolvedValue({
      ok: false,
      errors: [{ severity: 'error', message: 'SyntaxError', cell: 1 }],
      warnings: []
    });
    cycle.now();
    await until(() => !cycle.running);
    expect(cycle.result?.ok).toBe(false);
    expect(cycle.lastCompiled).toBe(good);

    // An option is wrong, the notebook compiles: its parameters are known.
    const options = compileResult({ ok: false, parameters: { lr: 0.1 } });
    service.compile.mockResolvedValue(options);
    cycle.now();
    await until(() => !cycle.running);
    expect(cycle.lastCompiled).toEqual(options);
    cycle.reset();
    expect(cycle.lastCompiled).toBeNull();
    cycle.dispose();
  });

  it('tells when no compile is due any more', async () => {
    const { service, cycle } = setup();
    await cycle.settled(); // none due: at once
    cycle.schedule();
    expect(cycle.pending).toBe(true);
    await cycle.settled();
    expect(cycle.pending).toBe(false);
    expect(service.compile).toHaveBeenCalledTimes(1);
    expect(cycle.result).toEqual(compileResult());

    cycle.schedule();
    const waiting = cycle.settled();
    cycle.cancel(); // another notebook: nothing due
    await waiting;
    expect(service.compile).toHaveBeenCalledTimes(1);
    cycle.dispose();
  });

  it('compiles once after a burst of changes', async () => {
    const { service, cycle } = setup();
    cycle.schedule();
    cycle.schedule();
    cycle.schedule();
    await until(() => service.compile.mock.calls.length > 0 && !cycle.running);
    expect(service.compile).toHaveBeenCalledTimes(1);
    cycle.dispose();
  });

  it('forgets the answer for another notebook, and compiles nothing without one', async () => {
    const { cycle } = setup();
    cycle.now();
    await until(() => !cycle.running);
    cycle.reset();
    expect(cycle.result).toBeNull();
    cycle.dispose();

    const none = setup(null);
    none.cycle.now();
    expect(none.cycle.running).toBe(false);
    expect(none.service.compile).not.toHaveBeenCalled();
    none.cycle.dispose();
  });
});
