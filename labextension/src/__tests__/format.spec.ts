import { formatAge, formatPlace } from '../panel/shared/format';

describe('formatAge', () => {
  const now = Date.parse('2026-01-10T12:00:00Z');
  it.each([
    ['2026-01-10T12:00:00Z', '0 s'],
    ['2026-01-10T11:59:15Z', '45 s'],
    ['2026-01-10T11:55:00Z', '5 min'],
    ['2026-01-10T09:00:00Z', '3 h'],
    ['2026-01-08T12:00:00Z', '2 days'],
    ['2026-01-10T12:00:05Z', '0 s'],
    [null, ''],
    ['not a date', '']
  ])('%j → %j', (iso, age) => {
    expect(formatAge(iso, now)).toBe(age);
  });
});

describe('formatPlace', () => {
  it('counts cells from 1', () => {
    expect(formatPlace(0)).toBe('cell 1');
    expect(formatPlace(6, 3)).toBe('cell 7, line 3');
    expect(formatPlace(null, 3)).toBe('');
  });
});
