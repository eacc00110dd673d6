import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteBudget } from './byte-budget.ts';

describe('ByteBudget', () => {
  it('takes what fits, refuses what would cross the limit without taking any of it, and takes again what was given back', () => {
    const b = new ByteBudget(100);
    expect(b.take(60)).toBe(true);
    expect(b.take(41)).toBe(false);
    expect(b.taken).toBe(60);
    expect(b.take(40)).toBe(true);
    expect(b.take(0)).toBe(true);
    expect(b.take(1)).toBe(false);
    b.give(40);
    expect(b.taken).toBe(60);
    expect(b.take(40)).toBe(true);
  });

  it('refuses a limit, a take or a give that is not a whole number ≥ 0, and a give of more than was taken', () => {
    for (const bad of [-1, 1.5, Number.NaN, Infinity]) expect(() => new ByteBudget(bad)).toThrow(RangeError);
    const b = new ByteBudget(10);
    for (const bad of [-1, 0.5, Number.NaN]) {
      expect(() => b.take(bad)).toThrow(/whole number/);
      expect(() => b.give(bad)).toThrow(/whole number/);
    }
    b.take(3);
    expect(() => b.give(4)).toThrow(/only 3 are taken/);
    expect(b.taken).toBe(3);
  });

  it('never holds more than its limit, whatever readers take and give back in any order', () => {
    const step = fc.oneof(
      fc.record({ reader: fc.integer({ min: 0, max: 4 }), take: fc.integer({ min: 0, max: 70 }) }),
      fc.record({ reader: fc.integer({ min: 0, max: 4 }), giveAll: fc.constant(true) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.array(step, { maxLength: 300 }), (limit, steps) => {
        const b = new ByteBudget(limit);
        const held = [0, 0, 0, 0, 0];
        for (const s of steps) {
          if ('take' in s) {
            const fits = b.taken + s.take <= limit;
            expect(b.take(s.take)).toBe(fits);
            if (fits) held[s.reader]! += s.take;
          } else {
            b.give(held[s.reader]!);
            held[s.reader] = 0;
          }
          expect(b.taken).toBe(held.reduce((x, y) => x + y, 0));
          expect(b.taken).toBeLessThanOrEqual(limit);
        }
      }),
    );
  });
});
