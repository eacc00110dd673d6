import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { setRecent } from './recent.ts';

describe('setRecent', () => {
  it('moves a key set again to the end, and forgets the least recent past max', () => {
    const m = new Map<string, number>();
    setRecent(m, 'a', 1, 2);
    setRecent(m, 'b', 2, 2);
    setRecent(m, 'a', 3, 2);
    expect([...m]).toEqual([
      ['b', 2],
      ['a', 3],
    ]);
    setRecent(m, 'c', 4, 2);
    expect([...m]).toEqual([
      ['a', 3],
      ['c', 4],
    ]);
  });

  it('holds at most max entries, the last max distinct keys set, in the order last set', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), fc.integer({ min: 1, max: 10 }), (keys, max) => {
        const m = new Map<number, number>();
        keys.forEach((k, i) => setRecent(m, k, i, max));
        const lastSet = [...new Map(keys.map((k, i) => [k, i]))].sort((x, y) => x[1] - y[1]);
        expect([...m]).toEqual(lastSet.slice(Math.max(0, lastSet.length - max)));
      }),
    );
  });
});
