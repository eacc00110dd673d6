import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapLimit } from './map-limit.ts';

describe('mapLimit', () => {
  it('returns every result in input order and never has more than `limit` calls in flight', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(5), { maxLength: 40 }), fc.integer({ min: 1, max: 8 }), async (delays, limit) => {
        let inFlight = 0;
        let most = 0;
        const out = await mapLimit(delays, limit, async (d, i) => {
          inFlight++;
          most = Math.max(most, inFlight);
          // yield d + 1 times: every call is still in flight when the next starts, and calls finish out of order
          for (let k = 0; k <= d; k++) await Promise.resolve();
          inFlight--;
          return i * 10 + d;
        });
        expect(out).toEqual(delays.map((d, i) => i * 10 + d));
        expect(most).toBeLessThanOrEqual(limit);
        if (delays.length > 0) expect(most).toBe(Math.min(limit, delays.length));
      }),
    );
  });

  it('rejects with the first failure', async () => {
    await expect(mapLimit([1, 2, 3], 2, async (x) => (x === 2 ? Promise.reject(new Error('two')) : x))).rejects.toThrow('two');
  });

  it('refuses a limit below 1', async () => {
    await expect(mapLimit([1], 0, async (x) => x)).rejects.toThrow(RangeError);
  });
});
