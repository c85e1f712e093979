import { CappedMap, CappedSet } from '../capped';

describe('a set and a map of at most `limit` entries', () => {
  it('a set keeps the last `limit` added, however many come', () => {
    const set = new CappedSet<number>(3);
    for (let i = 0; i < 1000; i++) {
      set.add(i);
      expect(set.size).toBe(Math.min(i + 1, 3));
    }
    expect([997, 998, 999].every(i => set.has(i))).toBe(true);
    expect(set.has(996)).toBe(false);
    set.add(998); // already there: nothing dropped
    expect(set.size).toBe(3);
    expect(set.has(997)).toBe(true);
    expect(set.delete(997)).toBe(true);
    expect(set.has(997)).toBe(false);
    expect(set.size).toBe(2);
  });

  it('a map keeps the last `limit` keys set, their values kept', () => {
    const map = new CappedMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('c', 3);
    expect(map.size).toBe(2);
    expect(map.has('a')).toBe(false);
    expect(map.get('a')).toBeUndefined();
    expect(map.get('b')).toBe(2);
    map.set('b', 20); // set again: kept, not dropped
    expect(map.get('b')).toBe(20);
    expect(map.get('c')).toBe(3);
    map.delete('b');
    map.set('d', 4);
    expect([map.size, map.get('c'), map.get('d')]).toEqual([2, 3, 4]);
  });

  it('a limit of 0 keeps nothing', () => {
    const set = new CappedSet<string>(0);
    set.add('x');
    expect(set.size).toBe(0);
  });
});
