import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planSlices, sliceSlots } from './level-slices.ts';

describe('planSlices', () => {
  it('keeps a host whole and packs hosts in order of first appearance', () => {
    expect(planSlices(['a', 'b', 'a', 'c', 'b'], 4)).toEqual([
      { pages: [0, 1, 2, 4], hosts: 2 },
      { pages: [3], hosts: 1 },
    ]);
    expect(planSlices(['a', 'b', 'a', 'c', 'b'], 2)).toEqual([
      { pages: [0, 2], hosts: 1 },
      { pages: [1, 4], hosts: 1 },
      { pages: [3], hosts: 1 },
    ]);
  });

  it('cuts a host larger than a slice into slices of its own, marked to run one after another', () => {
    expect(planSlices(['a', 'a', 'a', 'b'], 2)).toEqual([
      { pages: [0, 1], hosts: 1, splitHost: 'a' },
      { pages: [2], hosts: 1, splitHost: 'a' },
      { pages: [3], hosts: 1 },
    ]);
  });

  it('every page is in exactly one slice, no slice is over the limit, and only a split host spans slices', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { maxLength: 200 }), fc.integer({ min: 1, max: 40 }), (hosts, max) => {
        const slices = planSlices(hosts, max);
        const all = slices.flatMap((s) => s.pages).sort((x, y) => x - y);
        expect(all).toEqual(hosts.map((_, i) => i));
        for (const s of slices) {
          expect(s.pages.length).toBeLessThanOrEqual(max);
          expect(new Set(s.pages.map((i) => hosts[i])).size).toBe(s.hosts);
        }
        const sliceOf = new Map<string, Set<number>>();
        slices.forEach((s, k) => s.pages.forEach((i) => sliceOf.set(hosts[i]!, (sliceOf.get(hosts[i]!) ?? new Set()).add(k))));
        for (const [host, ks] of sliceOf) if (ks.size > 1) expect([...ks].every((k) => slices[k]!.splitHost === host)).toBe(true);
      }),
    );
  });
});

describe('sliceSlots', () => {
  it('shares the slots in proportion to hosts when every slice can run at once', () => {
    expect(sliceSlots([10, 30], 4)).toEqual([1, 3]);
    expect(sliceSlots([1, 30], 8)).toEqual([1, 7]);
    expect(sliceSlots([2], 64)).toEqual([2]);
  });

  it('gives one slot each when there are more slices than slots', () => {
    expect(sliceSlots([5, 5, 5], 2)).toEqual([1, 1, 1]);
  });

  it('never hands out more than the parallelism, nor more slots than a slice has hosts, nor fewer than one', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 64 }), (hosts, p) => {
        const slots = sliceSlots(hosts, p);
        expect(slots).toHaveLength(hosts.length);
        slots.forEach((s, i) => {
          expect(s).toBeGreaterThanOrEqual(1);
          if (hosts.length < p) expect(s).toBeLessThanOrEqual(hosts[i]!);
        });
        if (hosts.length <= p) expect(slots.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(p);
      }),
    );
  });

  it('refuses a parallelism below 1', () => {
    expect(() => sliceSlots([1], 0)).toThrow(RangeError);
  });
});
