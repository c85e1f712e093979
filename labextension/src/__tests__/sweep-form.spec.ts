import {
  emptySweep,
  parseDimension,
  splitItems,
  sameSweep,
  sweepFromMetadata,
  sweepSettings,
  sweepToMetadata,
  validateSweep
} from '../form/sweep';

/**
 * A swept parameter is read as the server reads it (kale_ext/runs/space.py):
 * a list or a range, typed by the parameter's default; a bad one names why.
 */
describe('parseDimension', () => {
  it.each([
    ['1e-4, 1e-3', 0.001, ['1e-4', '1e-3']],
    ['choice(sgd, adam)', 'sgd', ['sgd', 'adam']],
    ['32,64', 32, ['32', '64']],
    ['true, false', true, ['true', 'false']],
    ["'a,b', c", 'x', ["'a,b'", 'c']]
  ])('%s (default %j) is the values %j', (text, def, values) => {
    expect(parseDimension(text, def)).toEqual({
      ok: true,
      value: { kind: 'values', values }
    });
  });

  it.each([
    [
      'loguniform(1e-5, 1e-1)',
      0.001,
      { kind: 'loguniform', low: 1e-5, high: 0.1 }
    ],
    ['uniform(0,0.5)', 0.1, { kind: 'uniform', low: 0, high: 0.5 }],
    ['int(1, 4)', 2, { kind: 'int', low: 1, high: 4 }]
  ])('%s is a range', (text, def, value) => {
    expect(parseDimension(text, def)).toEqual({ ok: true, value });
  });

  it.each([
    ['', 0.1, 'give values'],
    ['1e-4,,1e-3', 0.1, 'has an empty value'],
    ['1e-4, fast', 0.1, '"fast" is not a number'],
    ['yes, maybe', true, '"maybe" is not true or false'],
    ['loguniform(0, 1)', 0.1, 'loguniform needs both ends above 0, got 0'],
    ['uniform(1, 0.5)', 0.1, 'the low end 1 must be below the high end 0.5'],
    ['uniform(1)', 0.1, 'uniform(LOW, HIGH) takes two numbers'],
    ['int(1.5, 4)', 2, 'int(LOW, HIGH) takes whole numbers'],
    ['int(1, 4)', 0.5, 'int(LOW, HIGH) needs an int parameter'],
    ['uniform(0, 1)', 'adam', 'uniform(LOW, HIGH) needs a float parameter'],
    ['normal(0, 1)', 0.5, 'unknown range normal(...)']
  ])('%j (default %j): %s', (text, def, message) => {
    const parsed = parseDimension(text, def);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toContain(message);
  });

  it('splits at top-level commas only', () => {
    expect(splitItems('a, (b, c), [d, e], "f, g"')).toEqual([
      'a',
      '(b, c)',
      '[d, e]',
      '"f, g"'
    ]);
  });
});

describe('validateSweep', () => {
  const defaults = { lr: 0.001, epochs: 2 };

  it('says nothing when no parameter sweeps', () => {
    expect(validateSweep({ ...emptySweep(), parallel: 'x' }, defaults)).toEqual(
      []
    );
  });

  it('names the field of each problem', () => {
    const errors = validateSweep(
      {
        ...emptySweep(),
        params: { lr: 'loguniform(1e-5, 1e-1)', epochs: '1, x' },
        parallel: '65'
      },
      defaults
    );
    expect(errors).toEqual([
      {
        field: 'sweep.lr',
        message: 'a range needs a random or tpe search, not a grid'
      },
      { field: 'sweep.epochs', message: '"x" is not a number' },
      {
        field: 'sweep.parallel',
        message: 'must be a whole number from 1 to 64'
      }
    ]);
  });

  it('wants trials and a metric for a random search', () => {
    const errors = validateSweep(
      {
        ...emptySweep(),
        params: { lr: 'loguniform(1e-5, 1e-1)' },
        search: 'random'
      },
      defaults
    );
    expect(errors.map(e => e.field)).toEqual(['sweep.trials', 'sweep.metric']);
  });

  it('sends the specs as typed, with the settings chosen', () => {
    expect(
      sweepSettings({
        ...emptySweep(),
        params: { lr: ' 1e-4, 1e-3 ' },
        parallel: '2',
        metric: 'accuracy',
        goal: 'max'
      })
    ).toEqual({
      params: { lr: '1e-4, 1e-3' },
      search: 'grid',
      parallel: 2,
      metric: 'accuracy',
      goal: 'max'
    });
  });
});

describe('the sweep in the notebook metadata', () => {
  const full = {
    params: { lr: 'loguniform(1e-5, 1e-1)', opt: 'choice(sgd, adam)' },
    search: 'random',
    trials: '12',
    parallel: '3',
    metric: 'val_loss',
    goal: 'min',
    earlyStop: true
  };

  it('round-trips every setting, each spec as typed', () => {
    const meta = sweepToMetadata(full);
    expect(meta).toEqual({
      params: { lr: 'loguniform(1e-5, 1e-1)', opt: 'choice(sgd, adam)' },
      search: 'random',
      trials: 12,
      parallel: 3,
      metric: 'val_loss',
      goal: 'min',
      early_stop: true
    });
    expect(sweepFromMetadata(JSON.parse(JSON.stringify(meta)))).toEqual(full);
    expect(sameSweep(sweepFromMetadata(meta), full)).toBe(true);
  });

  it('keeps nothing for a new form, and reads nonsense as the defaults', () => {
    expect(sweepToMetadata(emptySweep())).toBeNull();
    expect(sweepToMetadata({ ...emptySweep(), parallel: 'x' })).toBeNull();
    expect(sweepFromMetadata(undefined)).toEqual(emptySweep());
    expect(
      sweepFromMetadata({ params: 3, search: 'bogus', goal: 'up', trials: {} })
    ).toEqual(emptySweep());
  });

  it('reads a list of values as the field shows it', () => {
    expect(
      sweepFromMetadata({ params: { lr: [0.001, 0.01], opt: ['sgd', 'adam'] } })
        .params
    ).toEqual({ lr: '0.001, 0.01', opt: 'sgd, adam' });
  });
});
