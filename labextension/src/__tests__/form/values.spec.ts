import { parseCount, parseParameter } from '../../form/values';

describe('parseParameter', () => {
  const cases: [string, string, unknown, unknown][] = [
    // [what, text, default, expected value or Error message part]
    ['an int', '3', 6, 3],
    ['a float for an int', '0.5', 6, 0.5],
    ['a float', '1e-3', 0.05, 0.001],
    ['JSON true', 'true', false, true],
    ["Python's True", 'True', false, true],
    ["Python's None", 'None', null, null],
    ['a list', '[1, 2]', [3], [1, 2]],
    ['an object', '{"a": 1}', { b: 2 }, { a: 1 }],
    ['a string as typed', 'adam', 'sgd', 'adam'],
    ['a string that looks like a number', '12', 'sgd', '12'],
    ['a quoted JSON string', '"a b"', 'sgd', 'a b'],
    ['anything for a null default', '"x"', null, 'x'],
    ['text with no default known', 'hello', undefined, 'hello'],
    ['JSON with no default known', '7', undefined, 7]
  ];
  it.each(cases)('reads %s', (_, text, defaultValue, expected) => {
    expect(parseParameter(text, defaultValue as never)).toEqual({
      ok: true,
      value: expected
    });
  });

  const errors: [string, string, unknown, string][] = [
    ['text for a number', 'abc', 6, 'is not a value'],
    ['a string for a number', '"3"', 6, 'must be a number'],
    ['a number for a bool', '1', true, 'must be a boolean'],
    ['an object for a list', '{}', [1], 'must be a list'],
    ['a list for an object', '[]', { a: 1 }, 'must be an object']
  ];
  it.each(errors)('rejects %s', (_, text, defaultValue, message) => {
    const parsed = parseParameter(text, defaultValue as never);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toContain(message);
  });
});

describe('parseCount', () => {
  it.each([
    ['', 1, { ok: true, value: undefined }],
    [' 4 ', 1, { ok: true, value: 4 }],
    ['0', 0, { ok: true, value: 0 }],
    ['0', 1, { ok: false, error: 'must be at least 1' }],
    ['1.5', 1, { ok: false, error: 'must be a whole number, not "1.5"' }],
    ['-2', 0, { ok: false, error: 'must be a whole number, not "-2"' }]
  ])('%j (minimum %d)', (text, minimum, expected) => {
    expect(parseCount(text, minimum)).toEqual(expected);
  });
});
