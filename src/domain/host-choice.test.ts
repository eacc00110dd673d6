import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chainMs, chooseHosts, type ChoiceState, type HostChoiceRule, type WaitingHost } from './host-choice.ts';

const host = (name: string, order: number, readyAt: number, pages: number, estMs = 1000, delayMs = 300): WaitingHost => ({
  host: name,
  order,
  readyAt,
  pages,
  estMs,
  delayMs,
});
const state = (s: Partial<ChoiceState>): ChoiceState => ({ now: 0, horizon: 0, free: 1, parallelism: 1, busyUntil: [], ...s });

describe('chainMs', () => {
  it('is the pages back to back with the delay between them', () => {
    expect(chainMs(host('a', 0, 0, 3, 100, 50))).toBe(3 * 100 + 2 * 50);
    expect(chainMs(host('a', 0, 0, 1, 100, 50))).toBe(100);
    expect(chainMs(host('a', 0, 0, 0, 100, 50))).toBe(0);
  });
});

describe('chooseHosts', () => {
  it('gives nothing when no slot is free, and nothing ready after the horizon', () => {
    for (const rule of ['earliest-start', 'least-bound'] as const) {
      expect(chooseHosts([host('a', 0, 0, 1)], state({ free: 0 }), rule)).toEqual([]);
      expect(chooseHosts([host('a', 0, 101, 1)], state({ horizon: 100 }), rule)).toEqual([]);
    }
  });
  it('earliest-start: the host that may start first, whatever the chains', () => {
    const ws = [host('long', 0, 300, 10), host('short', 1, 0, 1)];
    expect(chooseHosts(ws, state({ horizon: 300, parallelism: 2, busyUntil: [2000] }), 'earliest-start').map((h) => h.host)).toEqual(['short']);
  });
  it('least-bound: the long chain ready within the lead, when the short host would hold the slot past its ready time', () => {
    const ws = [host('long', 0, 300, 10), host('short', 1, 0, 1)];
    expect(chooseHosts(ws, state({ horizon: 300, parallelism: 2, busyUntil: [2000] }), 'least-bound').map((h) => h.host)).toEqual(['long']);
  });
  it('least-bound: the host ready now when the work over the slots is what bounds the crawl', () => {
    const ws = [host('long', 0, 300, 3), host('b', 1, 0, 3), host('c', 2, 0, 3)];
    expect(chooseHosts(ws, state({ horizon: 300 }), 'least-bound').map((h) => h.host)).toEqual(['b']);
  });
});

describe('chooseHosts (fast-check)', () => {
  const scenario = fc.record({
    hosts: fc.array(
      fc.record({
        readyAt: fc.integer({ min: -200, max: 600 }),
        pages: fc.integer({ min: 1, max: 12 }),
        estMs: fc.integer({ min: 0, max: 2000 }),
        delayMs: fc.integer({ min: 0, max: 1000 }),
      }),
      { maxLength: 8 },
    ),
    now: fc.integer({ min: 0, max: 300 }),
    leadMs: fc.integer({ min: 0, max: 500 }),
    parallelism: fc.integer({ min: 1, max: 6 }),
    busy: fc.array(fc.integer({ min: -100, max: 3000 }), { maxLength: 6 }),
    rule: fc.constantFrom<HostChoiceRule>('earliest-start', 'least-bound'),
  });

  it('fills every free slot it can, each with a distinct host ready by the horizon, whatever order the hosts are listed in', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const ws = s.hosts.map((h, i) => ({ host: `h${i}`, order: i, ...h }));
        const busyUntil = s.busy.slice(0, s.parallelism - 1);
        const st: ChoiceState = { now: s.now, horizon: s.now + s.leadMs, free: s.parallelism - busyUntil.length, parallelism: s.parallelism, busyUntil };
        const chosen = chooseHosts(ws, st, s.rule);
        const candidates = ws.filter((h) => h.readyAt <= st.horizon);
        expect(chosen.length).toBe(Math.min(st.free, candidates.length));
        expect(new Set(chosen.map((h) => h.host)).size).toBe(chosen.length);
        for (const h of chosen) expect(h.readyAt).toBeLessThanOrEqual(st.horizon);
        // the choice depends on the hosts, not on the order they are listed in
        const again = chooseHosts([...ws].reverse(), st, s.rule);
        expect(again.map((h) => h.host)).toEqual(chosen.map((h) => h.host));
      }),
      { numRuns: 500 },
    );
  });
});
