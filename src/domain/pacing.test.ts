import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostOf } from './crawl.ts';
import type { HostChoiceRule } from './host-choice.ts';
import {
  effectiveDelayMs,
  Pacer,
  pacingViolations,
  politenessLowerBound,
  simulatePacing,
  type Capture,
  type PacingOptions,
  type SimPage,
  type Started,
} from './pacing.ts';

const pages = (spec: [string, number][]): SimPage[] => spec.map(([host, durationMs]) => ({ host, durationMs }));
const makespan = (r: { finish: number }[]): number => Math.max(...r.map((x) => x.finish));
/** n pages on each host, named host0, host1, … */
const addPages = (p: Pacer<string>, spec: [string, number][]): void => {
  for (const [h, n] of spec) for (let i = 0; i < n; i++) p.add(h, `${h}${i}`);
};

describe('effectiveDelayMs', () => {
  it('is perHostDelayMs without a Crawl-delay', () => {
    expect(effectiveDelayMs(2000, undefined)).toBe(2000);
  });
  it('takes a Crawl-delay that is longer', () => {
    expect(effectiveDelayMs(2000, 5000)).toBe(5000);
  });
  it('ignores a Crawl-delay that is shorter or equal', () => {
    expect(effectiveDelayMs(2000, 1000)).toBe(2000);
    expect(effectiveDelayMs(2000, 2000)).toBe(2000);
    expect(effectiveDelayMs(2000, 0)).toBe(2000);
  });
  it('ignores a Crawl-delay that is not a finite number and clamps a negative delay to 0', () => {
    expect(effectiveDelayMs(100, Number.NaN)).toBe(100);
    expect(effectiveDelayMs(-5, undefined)).toBe(0);
  });
});

describe('hostOf', () => {
  it('keeps the port, as notBefore is keyed', () => {
    expect(hostOf('http://127.0.0.2:8080/a?b#c')).toBe('127.0.0.2:8080');
    expect(hostOf('https://Example.COM/')).toBe('example.com');
    expect(hostOf('https://example.com:443/')).toBe('example.com');
  });
});

describe('Pacer options', () => {
  it('refuses a negative delay and a parallelism below 1 or fractional', () => {
    expect(() => new Pacer({ perHostDelayMs: -1, hostParallelism: 1 })).toThrow(/perHostDelayMs/);
    expect(() => new Pacer({ perHostDelayMs: 0, hostParallelism: 0 })).toThrow(/hostParallelism/);
    expect(() => new Pacer({ perHostDelayMs: 0, hostParallelism: 1.5 })).toThrow(/hostParallelism/);
  });
  it('refuses finish or release on a host with nothing in flight', () => {
    const p = new Pacer<string>({ perHostDelayMs: 0, hostParallelism: 1 });
    expect(() => p.finish('a', 0)).toThrow(/nothing in flight/);
    expect(() => p.release('a')).toThrow(/nothing in flight/);
  });
});

describe('one host', () => {
  it('measures the delay from the finish of the previous capture, not its submit', () => {
    const r = simulatePacing(
      pages([
        ['a', 10],
        ['a', 500],
        ['a', 5],
      ]),
      { perHostDelayMs: 100, hostParallelism: 4 },
    );
    expect(r.map((x) => [x.start, x.finish])).toEqual([
      [0, 10],
      [110, 610],
      [710, 715],
    ]);
  });
  it('never has two captures in flight on the same host, even with slots free', () => {
    const p = new Pacer<number>({ perHostDelayMs: 0, hostParallelism: 8 });
    p.add('a', 1);
    p.add('a', 2);
    expect(p.take(0).map((s) => s.item)).toEqual([1]);
    expect(p.take(0)).toEqual([]);
    expect(p.nextWakeAt()).toBeUndefined();
    p.finish('a', 7);
    expect(p.take(7).map((s) => s.item)).toEqual([2]);
  });
  it('keeps the order pages were added in', () => {
    const r = simulatePacing(
      pages([
        ['a', 1],
        ['a', 1],
        ['a', 1],
        ['a', 1],
      ]),
      { perHostDelayMs: 10, hostParallelism: 1 },
    );
    expect(r.map((x) => x.start)).toEqual([0, 11, 22, 33]);
  });
  it('does not submit before readyAt and says when to wake', () => {
    const p = new Pacer<number>({ perHostDelayMs: 100, hostParallelism: 1 });
    p.add('a', 1);
    p.add('a', 2);
    p.take(0);
    p.finish('a', 40);
    expect(p.readyAt('a')).toBe(140);
    expect(p.take(139)).toEqual([]);
    expect(p.nextWakeAt()).toBe(140);
    expect(p.take(140)).toEqual([{ host: 'a', item: 2, at: 140 }]);
  });
  it('release ends the slot without recording a finish (a robots skip touches nothing)', () => {
    const p = new Pacer<number>({ perHostDelayMs: 100, hostParallelism: 1 });
    p.add('a', 1);
    p.add('a', 2);
    p.add('a', 3);
    p.take(0);
    p.finish('a', 10);
    expect(p.take(110).map((s) => s.item)).toEqual([2]);
    p.release('a');
    expect(p.readyAt('a')).toBe(110);
    expect(p.take(110).map((s) => s.item)).toEqual([3]);
    expect(p.lastFinishes()).toEqual({ a: 10 });
  });
  it('is done only when nothing is queued or in flight', () => {
    const p = new Pacer<number>({ perHostDelayMs: 0, hostParallelism: 1 });
    expect(p.done).toBe(true);
    p.add('a', 1);
    expect(p.done).toBe(false);
    expect(p.pending).toBe(1);
    p.take(0);
    expect(p.running).toBe(1);
    expect(p.done).toBe(false);
    p.finish('a', 0);
    expect(p.done).toBe(true);
  });
});

describe('Crawl-delay', () => {
  it('wins when longer than perHostDelayMs, per host', () => {
    const opts: PacingOptions = { perHostDelayMs: 100, hostParallelism: 4, crawlDelayMs: { a: 1000 } };
    const r = simulatePacing(
      pages([
        ['a', 10],
        ['a', 10],
        ['b', 10],
        ['b', 10],
      ]),
      opts,
    );
    expect(r.map((x) => [x.host, x.start])).toEqual([
      ['a', 0],
      ['a', 1010],
      ['b', 0],
      ['b', 110],
    ]);
    expect(pacingViolations(r, opts)).toEqual([]);
    // the same schedule is a violation once the longer Crawl-delay on b is known
    expect(pacingViolations(r, { ...opts, crawlDelayMs: { a: 1000, b: 500 } }).map((v) => v.kind)).toEqual(['gap']);
  });
  it('does not shorten perHostDelayMs when shorter', () => {
    const r = simulatePacing(
      pages([
        ['a', 10],
        ['a', 10],
      ]),
      { perHostDelayMs: 300, hostParallelism: 1, crawlDelayMs: { a: 50 } },
    );
    expect(r[1]!.start).toBe(310);
  });
  it('applies from the moment it is learnt (setCrawlDelay)', () => {
    const p = new Pacer<number>({ perHostDelayMs: 100, hostParallelism: 1 });
    p.add('a', 1);
    p.add('a', 2);
    p.take(0);
    p.setCrawlDelay('a', 2000);
    p.finish('a', 5);
    expect(p.delayFor('a')).toBe(2000);
    expect(p.readyAt('a')).toBe(2005);
  });
});

describe('notBefore and earlier finishes', () => {
  it('does not submit on a host before its notBefore', () => {
    const opts: PacingOptions = { perHostDelayMs: 100, hostParallelism: 4, notBefore: { a: 5000 } };
    const r = simulatePacing(
      pages([
        ['a', 10],
        ['b', 10],
        ['a', 10],
      ]),
      opts,
      1000,
    );
    expect(r.map((x) => [x.host, x.start])).toEqual([
      ['a', 5000],
      ['b', 1000],
      ['a', 5110],
    ]);
    expect(pacingViolations(r, opts)).toEqual([]);
    expect(pacingViolations(r, { ...opts, notBefore: { a: 5001 } }).map((v) => v.kind)).toEqual(['notBefore']);
  });
  it('a notBefore in the past changes nothing', () => {
    const r = simulatePacing(pages([['a', 10]]), { perHostDelayMs: 100, hostParallelism: 1, notBefore: { a: 0 } }, 1000);
    expect(r[0]!.start).toBe(1000);
  });
  it('keeps the delay after a finish seen in an earlier level (lastFinish), with the longer Crawl-delay', () => {
    const opts: PacingOptions = { perHostDelayMs: 100, hostParallelism: 1, lastFinish: { a: 900 }, crawlDelayMs: { a: 400 } };
    const r = simulatePacing(pages([['a', 10]]), opts, 1000);
    expect(r[0]!.start).toBe(1300);
    expect(pacingViolations([{ host: 'a', start: 1299, finish: 1300 }], opts).map((v) => v.kind)).toEqual(['gap']);
  });
});

describe('hostParallelism', () => {
  it('never has more than hostParallelism distinct hosts in flight', () => {
    const opts: PacingOptions = { perHostDelayMs: 0, hostParallelism: 2 };
    const p = new Pacer<string>(opts);
    for (const h of ['a', 'b', 'c', 'd']) p.add(h, h);
    expect(p.take(0).map((s) => s.host)).toEqual(['a', 'b']);
    expect(p.take(0)).toEqual([]);
    expect(p.nextWakeAt()).toBeUndefined();
    p.finish('b', 3);
    expect(p.take(3).map((s) => s.host)).toEqual(['c']);
  });
  it('uses a host’s delay to capture another host (the slot is not held through the delay)', () => {
    const opts: PacingOptions = { perHostDelayMs: 100, hostParallelism: 1 };
    const r = simulatePacing(
      pages([
        ['a', 50],
        ['a', 50],
        ['b', 50],
        ['b', 50],
      ]),
      opts,
    );
    expect(makespan(r)).toBe(250);
    expect(r.map((x) => [x.host, x.start])).toEqual([
      ['a', 0],
      ['a', 150],
      ['b', 50],
      ['b', 200],
    ]);
    expect(pacingViolations(r, opts)).toEqual([]);
  });
  it('starts the host with the longest remaining chain first', () => {
    const p = new Pacer<string>({ perHostDelayMs: 10, hostParallelism: 1 });
    p.add('short', 's1');
    p.add('long', 'l1');
    p.add('long', 'l2');
    p.add('long', 'l3');
    expect(p.take(0).map((s) => s.item)).toEqual(['l1']);
  });
  it('breaks ties by the order hosts were first seen', () => {
    const p = new Pacer<string>({ perHostDelayMs: 10, hostParallelism: 1 });
    p.add('x', 'x1');
    p.add('y', 'y1');
    expect(p.take(0).map((s) => s.item)).toEqual(['x1']);
  });
});

describe('the choice of the next host when slots are fewer than hosts', () => {
  it('gives a free slot to the host ready first, not to a longer chain that is ready later', () => {
    const p = new Pacer<string>({ perHostDelayMs: 100, hostParallelism: 1, lastFinish: { long: 0, short: -200 }, rule: 'earliest-start' });
    p.add('long', 'l1');
    p.add('long', 'l2');
    p.add('long', 'l3');
    p.add('short', 's1');
    // long is ready at 100, short since -100
    expect(p.take(50, 100)).toEqual([{ host: 'short', item: 's1', at: 50 }]);
  });
  it('looks ahead: a host ready within the lead gets the slot now, with the time it may start', () => {
    const p = new Pacer<string>({ perHostDelayMs: 100, hostParallelism: 2, lastFinish: { a: 0, b: 30 } });
    p.add('a', 'a1');
    p.add('b', 'b1');
    p.add('c', 'c1');
    expect(p.take(0, 0)).toEqual([{ host: 'c', item: 'c1', at: 0 }]);
    expect(p.take(20, 100)).toEqual([{ host: 'a', item: 'a1', at: 100 }]);
    expect(p.nextWakeAt()).toBeUndefined();
  });
  it('says when the next host may start, whatever the slot that freed up was used for', () => {
    const p = new Pacer<string>({ perHostDelayMs: 300, hostParallelism: 1 });
    addPages(p, [
      ['a', 3],
      ['b', 1],
      ['c', 1],
    ]);
    expect(p.take(0).map((s) => s.host)).toEqual(['a']);
    p.finish('a', 100);
    // b starts in a's delay; when it ends, the wake is a's ready time (400), which comes before c's own
    expect(p.take(100).map((s) => s.host)).toEqual(['b']);
    p.finish('b', 200);
    expect(p.take(200).map((s) => s.host)).toEqual(['c']);
    p.finish('c', 250);
    expect(p.nextWakeAt()).toBe(400);
    expect(p.take(400).map((s) => s.host)).toEqual(['a']);
  });
  it('keeps every rule with a lead: a capture starts at its host’s ready time, not when it was handed over', () => {
    const opts: PacingOptions = { perHostDelayMs: 300, hostParallelism: 2 };
    const ps: SimPage[] = [];
    for (let j = 0; j < 12; j++) [12, 9, 6, 3].forEach((n, i) => j < n && ps.push({ host: `h${i}`, durationMs: 100 + ((j * 37 + i * 11) % 50) }));
    const r = simulatePacing(ps, opts, 0, 100);
    expect(pacingViolations(r, opts)).toEqual([]);
    expect(makespan(r) / politenessLowerBound(ps, opts)).toBeLessThanOrEqual(1.01);
  });
});

describe('least-bound: the choice when captures take longer than the delay and slots are fewer than hosts', () => {
  // the pacing bench's site (12, 9, 6 and 3 pages), captures of 500 ms, a delay of 300 ms, 2 slots
  const site = (): SimPage[] => {
    const ps: SimPage[] = [];
    for (let j = 0; j < 12; j++) [12, 9, 6, 3].forEach((n, i) => j < n && ps.push({ host: `h${i}`, durationMs: 500 }));
    return ps;
  };
  const ratio = (rule: HostChoiceRule): number => {
    const opts: PacingOptions = { perHostDelayMs: 300, hostParallelism: 2, rule };
    const r = simulatePacing(site(), opts, 0, 300);
    expect(pacingViolations(r, opts)).toEqual([]);
    return makespan(r) / politenessLowerBound(site(), opts);
  };
  it('waits out the longest chain’s delay instead of pushing it back by a whole capture of another host', () => {
    expect(ratio('least-bound')).toBe(1);
    // what earliest-start did: a host ready now took the slot the 12-page host needed 300 ms later
    expect(ratio('earliest-start')).toBeGreaterThan(1.05);
  });
  it('takes the host ready now when the slots are what bounds the crawl (one slot, work > any chain)', () => {
    const p = new Pacer<string>({ perHostDelayMs: 300, hostParallelism: 1, rule: 'least-bound' });
    addPages(p, [
      ['long', 4],
      ['b', 3],
      ['c', 3],
    ]);
    expect(p.take(0).map((s) => s.host)).toEqual(['long']);
    p.finish('long', 1000, 1000);
    // long is ready at 1300; b may start now, and waiting would only add to the work over the slot
    expect(p.take(1000, 300)).toEqual([{ host: 'b', item: 'b0', at: 1000 }]);
  });
  it('gives the one free slot to the longest chain within the lead when another host would hold it past that chain’s ready time', () => {
    const choose = (rule: HostChoiceRule): Started<string>[] => {
      const p = new Pacer<string>({ perHostDelayMs: 300, hostParallelism: 2, notBefore: { x: 500, y: 500 }, rule });
      for (let i = 0; i < 6; i++) p.add('long', `l${i}`);
      p.add('x', 'x0');
      p.add('y', 'y0');
      expect(p.take(0).map((s) => s.host)).toEqual(['long']);
      expect(p.take(500).map((s) => s.host)).toEqual(['x']);
      p.finish('long', 1000, 1000);
      return p.take(1000, 300);
    };
    // y is ready now and long at 1300, x is expected to free its slot at 1500: y in this slot would
    // start long's 5 pages left at 1500, not 1300
    expect(choose('least-bound')).toEqual([{ host: 'long', item: 'l1', at: 1300 }]);
    expect(choose('earliest-start')).toEqual([{ host: 'y', item: 'y0', at: 1000 }]);
  });
});

describe('pacingViolations', () => {
  const opts: PacingOptions = { perHostDelayMs: 100, hostParallelism: 1 };
  it('finds a negative gap (overlap) and a short gap', () => {
    const caps: Capture[] = [
      { host: 'a', start: 0, finish: 50 },
      { host: 'a', start: 40, finish: 60 },
      { host: 'a', start: 100, finish: 110 },
    ];
    expect(pacingViolations(caps, { ...opts, hostParallelism: 9 }).map((v) => v.kind)).toEqual(['overlap', 'gap']);
  });
  it('accepts a gap of exactly the delay', () => {
    expect(
      pacingViolations(
        [
          { host: 'a', start: 0, finish: 50 },
          { host: 'a', start: 150, finish: 160 },
        ],
        opts,
      ),
    ).toEqual([]);
  });
  it('finds too many hosts at once, but not a finish and a start at the same instant', () => {
    expect(
      pacingViolations(
        [
          { host: 'a', start: 0, finish: 50 },
          { host: 'b', start: 49, finish: 60 },
        ],
        opts,
      ).map((v) => v.kind),
    ).toEqual(['parallelism']);
    expect(
      pacingViolations(
        [
          { host: 'a', start: 0, finish: 50 },
          { host: 'b', start: 50, finish: 60 },
        ],
        opts,
      ),
    ).toEqual([]);
  });
});

describe('politenessLowerBound', () => {
  it('is the longest per-host chain when there are slots for every host', () => {
    expect(
      politenessLowerBound(
        pages([
          ['a', 10],
          ['a', 10],
          ['a', 10],
          ['b', 30],
        ]),
        { perHostDelayMs: 100, hostParallelism: 2 },
      ),
    ).toBe(230);
  });
  it('is the total capture time over the slots when that is longer', () => {
    expect(
      politenessLowerBound(
        pages([
          ['a', 100],
          ['b', 100],
          ['c', 100],
          ['d', 100],
        ]),
        { perHostDelayMs: 0, hostParallelism: 2 },
      ),
    ).toBe(200);
  });
  it('counts notBefore, earlier finishes and Crawl-delay', () => {
    const ps = pages([
      ['a', 10],
      ['a', 10],
    ]);
    expect(politenessLowerBound(ps, { perHostDelayMs: 100, hostParallelism: 1, notBefore: { a: 50 } })).toBe(50 + 120);
    expect(politenessLowerBound(ps, { perHostDelayMs: 100, hostParallelism: 1, lastFinish: { a: 0 } })).toBe(100 + 120);
    expect(politenessLowerBound(ps, { perHostDelayMs: 100, hostParallelism: 1, crawlDelayMs: { a: 1000 } })).toBe(1020);
  });
});

// --- properties -----------------------------------------------------------------------------

const HOSTS = ['h0', 'h1', 'h2', 'h3', 'h4', 'h5'];
const scenario = fc.record({
  pages: fc.array(fc.record({ host: fc.constantFrom(...HOSTS), durationMs: fc.integer({ min: 0, max: 60 }) }), { minLength: 0, maxLength: 40 }),
  perHostDelayMs: fc.integer({ min: 0, max: 120 }),
  hostParallelism: fc.integer({ min: 1, max: 7 }),
  notBefore: fc.dictionary(fc.constantFrom(...HOSTS), fc.integer({ min: -100, max: 400 })),
  crawlDelayMs: fc.dictionary(fc.constantFrom(...HOSTS), fc.integer({ min: 0, max: 300 })),
  lastFinish: fc.dictionary(fc.constantFrom(...HOSTS), fc.integer({ min: -300, max: 0 })),
  rule: fc.constantFrom<HostChoiceRule>('earliest-start', 'least-bound'),
});

describe('pacing properties (fast-check)', () => {
  it('every page is captured once, and no schedule breaks a rule', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const r = simulatePacing(s.pages, s);
        expect(r.map((x) => x.index)).toEqual(s.pages.map((_, i) => i));
        r.forEach((x, i) => {
          expect(x.host).toBe(s.pages[i]!.host);
          expect(x.finish - x.start).toBe(s.pages[i]!.durationMs);
          expect(x.start).toBeGreaterThanOrEqual(0);
        });
        expect(pacingViolations(r, s)).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it('with the slot lead, a lead and a hand-over, every page is captured once, no rule is broken, and the bound holds', () => {
    fc.assert(
      fc.property(scenario, fc.integer({ min: 0, max: 150 }), fc.integer({ min: 0, max: 40 }), (s, leadMs, handoverMs) => {
        const lead = Math.min(leadMs, s.perHostDelayMs);
        const r = simulatePacing(s.pages, s, 0, lead, handoverMs, true);
        expect(r.map((x) => x.index)).toEqual(s.pages.map((_, i) => i));
        r.forEach((x, i) => expect(x.finish - x.start).toBe(s.pages[i]!.durationMs));
        expect(pacingViolations(r, s)).toEqual([]);
        if (s.pages.length > 0) expect(makespan(r)).toBeGreaterThanOrEqual(politenessLowerBound(s.pages, s));
      }),
      { numRuns: 400 },
    );
  });

  it('same-host gaps from the finish are at least the longer of the delay and Crawl-delay', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const r = simulatePacing(s.pages, s);
        for (const h of HOSTS) {
          const mine = r.filter((x) => x.host === h).sort((a, b) => a.start - b.start);
          const delay = Math.max(s.perHostDelayMs, s.crawlDelayMs[h] ?? 0);
          for (let i = 1; i < mine.length; i++) expect(mine[i]!.start - mine[i - 1]!.finish).toBeGreaterThanOrEqual(delay);
          if (mine.length > 0 && s.notBefore[h] !== undefined) expect(mine[0]!.start).toBeGreaterThanOrEqual(s.notBefore[h]!);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the makespan is never below the politeness lower bound, and equals it when every host has a slot', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        if (s.pages.length === 0) return;
        const r = simulatePacing(s.pages, s);
        const lb = politenessLowerBound(s.pages, s);
        expect(makespan(r)).toBeGreaterThanOrEqual(lb);
        if (s.hostParallelism >= new Set(s.pages.map((p) => p.host)).size) expect(makespan(r)).toBe(lb);
      }),
      { numRuns: 400 },
    );
  });

  it('is work-conserving: a slot is never left idle while some host may start', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const r = simulatePacing(s.pages, s);
        // at every start instant t of a later capture on host h, if h was ready earlier than t,
        // then all slots must have been busy over (readyAt, t)
        for (const x of r) {
          const prev = r.filter((y) => y.host === x.host && y.finish <= x.start).sort((a, b) => b.finish - a.finish)[0];
          const delay = Math.max(s.perHostDelayMs, s.crawlDelayMs[x.host] ?? 0);
          const ready = Math.max(
            0,
            s.notBefore[x.host] ?? -Infinity,
            prev ? prev.finish + delay : -Infinity,
            s.lastFinish[x.host] !== undefined ? s.lastFinish[x.host]! + delay : -Infinity,
          );
          if (ready < x.start) {
            // just before x.start, every slot was taken by other hosts
            const t = x.start - 0.5;
            const busy = r.filter((y) => y.start <= t && y.finish > t).length;
            expect(busy).toBe(s.hostParallelism);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('the choice of the next host (fast-check)', () => {
  // a run of the Pacer with k slots and n hosts driven by random finishes: at every take, the
  // hosts given a slot are checked against the state the pacer showed just before
  const run = fc.record({
    hosts: fc.array(
      fc.record({ pages: fc.integer({ min: 0, max: 5 }), notBefore: fc.integer({ min: -50, max: 300 }), crawlDelayMs: fc.integer({ min: 0, max: 150 }) }),
      { minLength: 1, maxLength: 7 },
    ),
    slots: fc.integer({ min: 1, max: 6 }),
    perHostDelayMs: fc.integer({ min: 0, max: 100 }),
    leadMs: fc.constantFrom(0, 0, 20, 100),
    durations: fc.array(fc.integer({ min: 0, max: 80 }), { minLength: 1, maxLength: 50 }),
    steps: fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 50 }),
  });

  it('a free slot and a ready host: a ready host is started, and the hosts started are the ones ready first', () => {
    fc.assert(
      fc.property(run, (r) => {
        const names = r.hosts.map((_, i) => `h${i}`);
        const opts: PacingOptions = {
          perHostDelayMs: r.perHostDelayMs,
          hostParallelism: r.slots,
          notBefore: Object.fromEntries(r.hosts.map((h, i) => [names[i], h.notBefore])),
          crawlDelayMs: Object.fromEntries(r.hosts.map((h, i) => [names[i], h.crawlDelayMs])),
        };
        const p = new Pacer<number>(opts);
        r.hosts.forEach((h, i) => Array.from({ length: h.pages }, (_, j) => p.add(names[i]!, j)));
        const inFlight: { host: string; finish: number }[] = [];
        let now = 0;
        for (let i = 0; !p.done && i < 2000; i++) {
          const before = p.snapshot().filter((h) => h.inFlight === 0 && h.queued > 0);
          const free = r.slots - p.running;
          const startAt = (h: { nextAllowedAt: number | null }): number => Math.max(now, h.nextAllowedAt ?? -Infinity);
          const candidates = before.filter((h) => startAt(h) <= now + r.leadMs);
          const started = p.take(now, r.leadMs);
          expect(started.length).toBe(Math.min(free, candidates.length));
          if (free > 0 && candidates.some((h) => startAt(h) === now)) expect(started[0]!.at).toBe(now);
          const left = candidates.filter((h) => !started.some((s) => s.host === h.host));
          for (const s of started) {
            const h = before.find((x) => x.host === s.host)!;
            expect(s.at).toBe(startAt(h));
            for (const o of left) expect(s.at).toBeLessThanOrEqual(startAt(o));
            inFlight.push({ host: s.host, finish: s.at + r.durations[i % r.durations.length]! });
          }
          // the next event: a finish, the next wake (minus the lead), or a random step forward
          inFlight.sort((a, b) => a.finish - b.finish);
          const wake = p.nextWakeAt();
          const next = Math.min(inFlight[0]?.finish ?? Infinity, wake === undefined ? Infinity : wake - r.leadMs, now + r.steps[i % r.steps.length]!);
          now = Math.max(now, next);
          while (inFlight.length > 0 && inFlight[0]!.finish <= now) {
            const f = inFlight.shift()!;
            p.finish(f.host, f.finish);
          }
        }
        expect(p.done).toBe(true);
      }),
      { numRuns: 400 },
    );
  });
});

describe('pacingViolations with captures that take no time', () => {
  it('counts a zero-length capture as in flight at its instant', () => {
    const caps: Capture[] = [
      { host: 'a', start: 10, finish: 20 },
      { host: 'b', start: 15, finish: 15 },
    ];
    expect(pacingViolations(caps, { perHostDelayMs: 0, hostParallelism: 1 }).map((v) => v.kind)).toEqual(['parallelism']);
    expect(pacingViolations(caps, { perHostDelayMs: 0, hostParallelism: 2 })).toEqual([]);
  });
  it('takes a capture that took no time and one submitted at that instant to be one after the other', () => {
    expect(
      pacingViolations(
        [
          { host: 'a', start: 0, finish: 5 },
          { host: 'b', start: 5, finish: 5 },
          { host: 'c', start: 5, finish: 9 },
        ],
        { perHostDelayMs: 0, hostParallelism: 1 },
      ),
    ).toEqual([]);
    expect(
      pacingViolations(
        [
          { host: 'a', start: 0, finish: 6 },
          { host: 'b', start: 5, finish: 5 },
        ],
        { perHostDelayMs: 0, hostParallelism: 1 },
      ).map((v) => v.kind),
    ).toEqual(['parallelism']);
  });
});

describe('slot lead: a capture handed over behind one in flight (takeBehind)', () => {
  it('gives nothing while a slot is free: take() is for that', () => {
    const p = new Pacer<string>({ perHostDelayMs: 100, hostParallelism: 2 });
    addPages(p, [['a', 2]]);
    expect(p.take(0).map((s) => s.host)).toEqual(['a']);
    p.add('b', 'b0');
    expect(p.takeBehind(0, ['a'])).toEqual([]);
  });
  it('with every slot in use, hands over a host that is not in flight, at its ready time', () => {
    const p = new Pacer<string>({ perHostDelayMs: 300, hostParallelism: 1, lastFinish: { b: 0 } });
    addPages(p, [
      ['a', 2],
      ['b', 1],
    ]);
    expect(p.take(0, 300).map((s) => s.host)).toEqual(['a']);
    // b is ready at 300, within the lead; a's second page cannot go behind a itself
    expect(p.takeBehind(10, ['a'], 300)).toEqual([{ host: 'b', item: 'b0', at: 300, behind: 'a' }]);
    expect(p.running).toBe(2);
    // nothing more behind: one per slot
    expect(p.takeBehind(20, ['a'], 300)).toEqual([]);
    p.finish('a', 100, 100);
    // b now holds the one slot: no take until it finishes
    expect(p.take(150, 300)).toEqual([]);
    p.finish('b', 400, 100);
    expect(p.take(400, 300)).toEqual([{ host: 'a', item: 'a1', at: 400 }]);
  });
  it('does not hand over a host that is not ready by the expected end of the capture ahead plus the lead', () => {
    const p = new Pacer<string>({ perHostDelayMs: 100, hostParallelism: 1, notBefore: { b: 5_000 } });
    addPages(p, [
      ['a', 1],
      ['b', 1],
    ]);
    expect(p.take(0, 100).map((s) => s.host)).toEqual(['a']);
    expect(p.takeBehind(0, ['a'], 100)).toEqual([]);
  });
  it('pairs each hand-over with the capture whose end it was chosen for, the one ending first first', () => {
    const p = new Pacer<string>({ perHostDelayMs: 0, hostParallelism: 2 });
    addPages(p, [
      ['a', 2],
      ['b', 2],
    ]);
    expect(p.take(0).map((s) => s.host)).toEqual(['a', 'b']);
    // a's captures take 1,000 ms, b's 100 ms
    p.finish('a', 1000, 1000);
    p.finish('b', 1000, 100);
    expect(p.take(1000).map((s) => s.host)).toEqual(['a', 'b']);
    addPages(p, [
      ['c', 1],
      ['d', 1],
    ]);
    // b frees its slot first: the first hand-over goes behind b, whichever order they are named in
    const behind = p.takeBehind(1010, ['a', 'b']);
    expect(behind.map((s) => s.behind)).toEqual(['b', 'a']);
    expect(behind.map((s) => s.host).sort()).toEqual(['c', 'd']);
    expect(p.running).toBe(4);
  });
  it('puts a hand-over that never reached a worker back at the head of its host', () => {
    const p = new Pacer<string>({ perHostDelayMs: 0, hostParallelism: 1 });
    addPages(p, [
      ['a', 1],
      ['b', 2],
    ]);
    p.take(0);
    const [behind] = p.takeBehind(0, ['a']);
    expect(behind).toEqual({ host: 'b', item: 'b0', at: 0, behind: 'a' });
    p.release('b');
    p.putBack('b', 'b0');
    p.finish('a', 50, 50);
    expect(p.take(50)).toEqual([{ host: 'b', item: 'b0', at: 50 }]);
  });
  it('on the pacing bench’s site with an 80 ms hand-over, comes within 1.01 of the bound from the first submit at 1, 2 and 4 slots (the hand-overs no longer add up)', () => {
    const ps: SimPage[] = [];
    for (let j = 0; j < 12; j++) [12, 9, 6, 3].forEach((n, i) => j < n && ps.push({ host: `h${i}`, durationMs: 100 }));
    for (const hostParallelism of [1, 2, 4]) {
      const opts: PacingOptions = { perHostDelayMs: 300, hostParallelism };
      const led = simulatePacing(ps, opts, 0, 300, 80, true);
      const plain = simulatePacing(ps, opts, 0, 300, 80, false);
      expect(pacingViolations(led, opts)).toEqual([]);
      // from the first submit, as the bench measures: one hand-over, the first, is left
      const first = Math.min(...led.map((x) => x.start));
      expect(first).toBe(80);
      expect(makespan(led) - first).toBeLessThanOrEqual((politenessLowerBound(ps, opts, first) - first) * 1.01);
      // without the lead, one slot waits a hand-over after every capture
      if (hostParallelism === 1) expect(makespan(plain) - makespan(led)).toBeGreaterThan(1000);
    }
  });
});
