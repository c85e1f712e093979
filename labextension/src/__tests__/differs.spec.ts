import { emptySweep, type ISweepForm } from '../form/sweep';
import { parameterOverrides, sweepSummary } from '../panel/preview/differs';

const DEFAULTS = { lr: 0.01, epochs: 3, optimizer: 'sgd', batch: 32 };

describe('parameterOverrides', () => {
  it('names each parameter set to another value than its default', () => {
    expect(
      parameterOverrides(DEFAULTS, { lr: '0.1', optimizer: 'adam', epochs: 3 })
    ).toEqual([
      { name: 'lr', from: '0.01', to: '0.1' },
      { name: 'optimizer', from: 'sgd', to: 'adam' }
    ]);
  });

  it('leaves out a value equal to its default, and a swept parameter', () => {
    expect(
      parameterOverrides(DEFAULTS, { epochs: '3', lr: '0.1' }, ['lr'])
    ).toEqual([]);
    expect(parameterOverrides(DEFAULTS, undefined)).toEqual([]);
  });

  it('says a parameter the notebook has no default for', () => {
    expect(parameterOverrides({}, { seed: '7' })).toEqual([
      { name: 'seed', from: '', to: '7' }
    ]);
  });
});

describe('sweepSummary', () => {
  const sweep = (change: Partial<ISweepForm>): ISweepForm => ({
    ...emptySweep(),
    ...change
  });

  it('is null when nothing sweeps', () => {
    expect(sweepSummary(emptySweep(), DEFAULTS)).toBeNull();
  });

  it("counts a grid's trials: every combination of the values", () => {
    expect(
      sweepSummary(
        sweep({ params: { lr: '1e-3, 1e-2, 0.1', batch: 'choice(32, 64)' } }),
        DEFAULTS
      )
    ).toEqual({
      search: 'grid',
      trials: 6,
      dimensions: [
        { name: 'batch', values: '32, 64' },
        { name: 'lr', values: '1e-3, 1e-2, 0.1' }
      ]
    });
  });

  it('takes the trials of a random search from its field, a range as typed', () => {
    const summary = sweepSummary(
      sweep({
        params: { lr: 'loguniform(1e-5, 1e-1)' },
        search: 'random',
        trials: '12'
      }),
      DEFAULTS
    );
    expect(summary?.trials).toBe(12);
    expect(summary?.dimensions).toEqual([
      { name: 'lr', values: 'loguniform(1e-5, 1e-1)' }
    ]);
    expect(
      sweepSummary(sweep({ params: { lr: '0.1' }, search: 'tpe' }), DEFAULTS)
        ?.trials
    ).toBeNull();
  });
});
