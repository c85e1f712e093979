import {
  FOLD_CHARS,
  FOLD_LINES,
  foldYaml
} from '../panel/preview/preview-yaml';

const script = Array.from({ length: 20 }, (_, i) => `      line ${i}`);
const blob = 'eNq' + 'A'.repeat(4000);
const YAML = [
  'kind: TrainJob',
  'metadata:',
  '  name: digits-ddp-abcde',
  'spec:',
  '  trainer:',
  '    command:',
  '    - python',
  '    - -c',
  '    - |',
  ...script,
  `    - '{"args": {"lr": 0.001}}'`,
  `    - ${blob}`,
  '    numNodes: 2',
  ''
].join('\n');

describe('foldYaml', () => {
  const pieces = foldYaml(YAML);

  it('gives back the YAML as it is, joined', () => {
    expect(pieces.map(p => p.text).join('')).toBe(YAML);
  });

  it('folds the bootstrap script and the compressed function, nothing else', () => {
    const folds = pieces.filter(p => p.kind === 'fold');
    expect(folds.map(p => p.kind === 'fold' && p.label)).toEqual([
      '20 lines',
      '4,003 characters'
    ]);
    expect(folds[0].text).toBe(script.join('\n') + '\n');
    expect(folds[1].text).toBe(blob + '\n');
    const shown = pieces
      .filter(p => p.kind === 'text')
      .map(p => p.text)
      .join('');
    expect(shown).toContain('name: digits-ddp-abcde');
    expect(shown).toContain('    - |\n');
    expect(shown).toContain(`    - '{"args": {"lr": 0.001}}'\n    - `);
    expect(shown).toContain('numNodes: 2');
  });

  it('leaves short blocks and lines alone', () => {
    const short = [
      'a: |',
      ...Array.from({ length: FOLD_LINES }, () => '  x'),
      `b: ${'y'.repeat(FOLD_CHARS - 3)}`
    ].join('\n');
    expect(foldYaml(short)).toEqual([{ kind: 'text', text: short }]);
  });

  it('folds a block under a key, up to its last indented line', () => {
    const text = ['run: |', ...script, 'after: 1'].join('\n');
    expect(foldYaml(text)).toEqual([
      { kind: 'text', text: 'run: |\n' },
      { kind: 'fold', label: '20 lines', text: script.join('\n') + '\n' },
      { kind: 'text', text: 'after: 1' }
    ]);
  });
});
