import contract from '../../contract.json';
import {
  formatParameter,
  isQuantity,
  parseCount,
  quantityValue
} from '../../form/values';

describe('parseCount: a count within its option’s bounds (the contract’s)', () => {
  const { nodes, procs_per_node: procs, gpu } = contract.options;
  it.each([
    ['', 'nodes', { ok: true, value: undefined }],
    [' 4 ', 'nodes', { ok: true, value: 4 }],
    ['0', 'gpu', { ok: true, value: 0 }],
    ['0', 'nodes', { ok: false, error: `must be at least ${nodes.minimum}` }],
    [
      String(nodes.maximum + 1),
      'nodes',
      {
        ok: false,
        error: `must be at most ${nodes.maximum}, not ${nodes.maximum + 1}`
      }
    ],
    [String(procs.maximum), 'procs_per_node', { ok: true, value: 256 }],
    [
      String(gpu.maximum + 1),
      'gpu',
      { ok: false, error: `must be at most ${gpu.maximum}, not 65` }
    ],
    ['1.5', 'nodes', { ok: false, error: 'must be a whole number, not "1.5"' }],
    ['-2', 'gpu', { ok: false, error: 'must be a whole number, not "-2"' }]
  ])('%j (%s)', (text, option, expected) => {
    expect(parseCount(text, option)).toEqual(expected);
  });

  it('reads the bounds the server has', () => {
    expect(nodes).toEqual({ kind: 'count', minimum: 1, maximum: 1000 });
  });
});

describe('quantities, by the contract’s pattern and suffixes', () => {
  it.each([
    ['500m', 0.5],
    ['2', 2],
    ['1Gi', 2 ** 30],
    ['1G', 1e9],
    ['1e3', 1000],
    ['.5', 0.5],
    ['4GB', null],
    ['', null],
    ['-1', null],
    ['1'.repeat(contract.k8s.patterns.quantity.max_length + 1), null]
  ])('%j → %j', (text, value) => {
    expect(quantityValue(text)).toBe(value);
    expect(isQuantity(text)).toBe(value !== null);
  });
});

describe('formatParameter', () => {
  it.each([
    [undefined, ''],
    ['adam', 'adam'],
    [0.5, '0.5'],
    [false, 'false'],
    [[1, 2], '[1,2]']
  ])('%j → %j', (value, text) => {
    expect(formatParameter(value as never)).toBe(text);
  });
});
