import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InFlightLimit } from './capture.ts';

describe('InFlightLimit', () => {
  it('lets `max` in at once and the next in line when one leaves', async () => {
    const limit = new InFlightLimit(2);
    const order: string[] = [];
    await limit.acquire();
    await limit.acquire();
    const third = limit.acquire().then(() => order.push('third'));
    const fourth = limit.acquire().then(() => order.push('fourth'));
    await Promise.resolve();
    expect(order).toEqual([]);
    limit.release();
    await third;
    expect(order).toEqual(['third']);
    limit.release();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
  });

  it('never holds more than max, and every holder gets in, whatever the timings', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.array(fc.nat(3), { minLength: 1, maxLength: 30 }), async (max, holds) => {
        const limit = new InFlightLimit(max);
        let held = 0;
        let peak = 0;
        let done = 0;
        await Promise.all(
          holds.map(async (ticks) => {
            await limit.acquire();
            held++;
            peak = Math.max(peak, held);
            for (let t = 0; t < ticks; t++) await Promise.resolve();
            held--;
            done++;
            limit.release();
          }),
        );
        expect(peak).toBeLessThanOrEqual(max);
        expect(done).toBe(holds.length);
      }),
    );
  });
});
