import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LIST_CACHE_MS, listContext } from '../../src/fga/reach.ts';

describe('listContext', () => {
  it('is the same for every moment of one cache window, and never later than now', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: 0, max: LIST_CACHE_MS - 1 }), (t, d) => {
        const start = Math.floor(t / LIST_CACHE_MS) * LIST_CACHE_MS;
        expect(listContext(start + d)).toEqual(listContext(start));
        const at = Date.parse(listContext(t).current_time);
        expect(at).toBeLessThanOrEqual(t);
        expect(t - at).toBeLessThan(LIST_CACHE_MS);
      }),
    );
  });
  it('rounds down to the 10 s window', () => {
    expect(listContext(Date.parse('2030-01-01T00:00:19.999Z'))).toEqual({ current_time: '2030-01-01T00:00:10.000Z' });
  });
});
