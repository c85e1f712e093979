import {
  cellTags,
  chooseRole,
  editorTags,
  offeredOn,
  roleOf,
  roleTags,
  tagClass
} from '../tags/tags';
import { GRAMMAR } from './fakes';

const ROLE = roleTags(GRAMMAR).map(t => t.tag);

describe('the tags the editor offers', () => {
  it('offers one tag per role, named as the role', () => {
    expect(editorTags(GRAMMAR).map(t => t.tag)).toEqual([
      'imports',
      'functions',
      'parameters',
      'training',
      'skip',
      'distributed'
    ]);
  });

  it('treats Kale aliases as role tags, but not patterns', () => {
    expect(ROLE).toContain('pipeline-parameters');
    expect(ROLE).not.toContain('step:<name>');
    expect(ROLE).not.toContain('limit:<key>:<value>');
  });
});

describe('chooseRole', () => {
  it.each([
    [[], 'imports', ['imports']],
    [['imports'], null, []],
    [['imports'], 'skip', ['skip']],
    [['pipeline-parameters'], 'parameters', ['parameters']],
    [
      ['hide-input', 'step:load', 'functions'],
      'training',
      ['hide-input', 'step:load', 'training']
    ],
    [['hide-input', 'skip'], null, ['hide-input']]
  ])('%j + %s → %j', (tags, tag, expected) => {
    expect(chooseRole(tags, tag, ROLE)).toEqual(expected);
  });
});

describe('roleOf', () => {
  it.each([
    [[], null],
    [['hide-input'], null],
    [['pipeline-parameters'], 'parameters'],
    [['other', 'skip'], 'skip']
  ])('%j → %s', (tags, role) => {
    expect(roleOf(tags, GRAMMAR)).toBe(role);
  });
});

describe('cellTags and classes', () => {
  it('reads the tags metadata', () => {
    expect(cellTags(['a', 2, 'b'])).toEqual(['a', 'b']);
    expect(cellTags(undefined)).toEqual([]);
    expect(cellTags('skip')).toEqual([]);
  });

  it('keeps only the role tags, in order', () => {
    expect(offeredOn(['x', 'skip', 'step:a'], ROLE)).toEqual(['skip']);
  });

  it('makes a class of any tag', () => {
    expect(tagClass('skip')).toBe('kale-ext-tag-skip');
    expect(tagClass('pipeline-parameters')).toBe(
      'kale-ext-tag-pipeline-parameters'
    );
    expect(tagClass('step:a b')).toBe('kale-ext-tag-step-a-b');
  });
});
