import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { InvalidInputError } from './invalid-input.ts';
import {
  BOTH_SOURCES_MESSAGE,
  CRAWL_DEFAULTS,
  NO_BODY_MESSAGE,
  NO_SOURCE_MESSAGE,
  computeNotBefore,
  decideAfterLevel,
  dropFragment,
  hostOf,
  levelSlots,
  normalizeSeed,
  planSeedLevel,
  readsLinks,
  resolveLimits,
  seedSource,
} from './crawl.ts';

describe('seedSource', () => {
  it('takes seeds or fromTargets', () => {
    expect(seedSource({ seeds: ['https://a.test/'] })).toBe('seeds');
    expect(seedSource({ fromTargets: {} })).toBe('fromTargets');
    expect(seedSource({ fromTargets: { limit: 3 } })).toBe('fromTargets');
  });

  it('says both and neither differently', () => {
    const both = () => seedSource({ seeds: ['https://a.test/'], fromTargets: {} });
    const neither = () => seedSource({ maxDepth: 1 });
    expect(both).toThrow(InvalidInputError);
    expect(both).toThrow(BOTH_SOURCES_MESSAGE);
    expect(neither).toThrow(InvalidInputError);
    expect(neither).toThrow(NO_SOURCE_MESSAGE);
    expect(BOTH_SOURCES_MESSAGE).not.toBe(NO_SOURCE_MESSAGE);
  });

  it('refuses an empty seed list', () => {
    expect(() => seedSource({ seeds: [] })).toThrow(InvalidInputError);
  });

  it('refuses anything that is not an object with a 400 saying so, never a TypeError', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constant(undefined), fc.constant(null), fc.array(fc.jsonValue()), fc.string(), fc.double(), fc.boolean()), (body) => {
        expect(() => seedSource(body as never)).toThrow(new InvalidInputError(NO_BODY_MESSAGE));
      }),
    );
  });
});

describe('resolveLimits', () => {
  it('uses the spec defaults for seeds', () => {
    expect(resolveLimits({ seeds: ['x'] }, 'seeds', 1)).toEqual({ maxDepth: 2, maxPages: 30, perHostDelayMs: 2000, hostParallelism: 4 });
    expect(CRAWL_DEFAULTS).toEqual({ maxDepth: 2, maxPages: 30, perHostDelayMs: 2000, hostParallelism: 4 });
  });

  it('fromTargets: depth 0 unless given, explicit value wins', () => {
    expect(resolveLimits({ fromTargets: {} }, 'fromTargets', 3).maxDepth).toBe(0);
    expect(resolveLimits({ fromTargets: {}, maxDepth: 2 }, 'fromTargets', 3).maxDepth).toBe(2);
  });

  it('fromTargets: maxPages never below the seed count, explicit or default', () => {
    expect(resolveLimits({ fromTargets: {} }, 'fromTargets', 45).maxPages).toBe(45);
    expect(resolveLimits({ fromTargets: {}, maxPages: 5 }, 'fromTargets', 12).maxPages).toBe(12);
    expect(resolveLimits({ fromTargets: {}, maxPages: 50 }, 'fromTargets', 12).maxPages).toBe(50);
    expect(resolveLimits({ fromTargets: {} }, 'fromTargets', 3).maxPages).toBe(30);
  });

  it('seeds: explicit maxPages stands even below the seed count', () => {
    expect(resolveLimits({ seeds: ['a', 'b', 'c'], maxPages: 2 }, 'seeds', 3).maxPages).toBe(2);
  });

  it('explicit values always win', () => {
    fc.assert(
      fc.property(
        fc.nat(20),
        fc.integer({ min: 1, max: 1000 }),
        fc.nat(10_000),
        fc.integer({ min: 1, max: 64 }),
        (maxDepth, maxPages, perHostDelayMs, hostParallelism) => {
          const l = resolveLimits({ seeds: ['x'], maxDepth, maxPages, perHostDelayMs, hostParallelism }, 'seeds', 1);
          expect(l).toEqual({ maxDepth, maxPages, perHostDelayMs, hostParallelism });
        },
      ),
    );
  });

  it('fromTargets maxPages is at least both the request and the seed count', () => {
    fc.assert(
      fc.property(fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }), fc.integer({ min: 1, max: 2000 }), (maxPages, seeds) => {
        const l = resolveLimits({ fromTargets: {}, maxPages }, 'fromTargets', seeds);
        expect(l.maxPages).toBeGreaterThanOrEqual(seeds);
        expect(l.maxPages).toBe(Math.max(maxPages ?? 30, seeds));
      }),
    );
  });
});

describe('urls', () => {
  it('drops fragments only', () => {
    expect(dropFragment('https://a.test/x?b=1&a=2#top')).toBe('https://a.test/x?b=1&a=2');
    expect(dropFragment('https://a.test/x')).toBe('https://a.test/x');
    expect(dropFragment('https://a.test/#')).toBe('https://a.test/');
  });

  it('normalises seeds as links are resolved', () => {
    expect(normalizeSeed('https://Example.COM')).toBe('https://example.com/');
    expect(normalizeSeed('http://a.test:80/x?b=1&a=2#frag')).toBe('http://a.test/x?b=1&a=2');
    expect(normalizeSeed('ftp://a.test/')).toBeNull();
    expect(normalizeSeed('/relative')).toBeNull();
    expect(normalizeSeed('not a url')).toBeNull();
  });

  it('hosts keep their port', () => {
    expect(hostOf('http://127.0.0.2:8080/a')).toBe('127.0.0.2:8080');
    expect(hostOf('https://Example.COM:443/')).toBe('example.com');
    expect(hostOf('http://example.com:80/')).toBe('example.com');
  });
});

describe('levels and slots', () => {
  it('never hands out more than maxPages', () => {
    fc.assert(
      fc.property(fc.nat(200), fc.integer({ min: 1, max: 200 }), (used, maxPages) => {
        const s = levelSlots(used, maxPages);
        expect(s).toBeGreaterThanOrEqual(0);
        if (used <= maxPages) expect(used + s).toBe(maxPages);
        else expect(s).toBe(0);
      }),
    );
  });

  it('plans the seed level: distinct, ordered, cut at maxPages', () => {
    expect(planSeedLevel(['a', 'b', 'a', 'c'], 2)).toEqual({ take: ['a', 'b'], cut: ['c'] });
    expect(planSeedLevel(['a'], 30)).toEqual({ take: ['a'], cut: [] });
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 3 }), { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 50 }), (seeds, maxPages) => {
        const { take, cut } = planSeedLevel(seeds, maxPages);
        expect(take.length).toBeLessThanOrEqual(maxPages);
        expect(new Set([...take, ...cut]).size).toBe(take.length + cut.length);
        expect([...take, ...cut]).toEqual([...new Set(seeds)]);
      }),
    );
  });

  it('reads links only on follow pages below maxDepth', () => {
    expect(readsLinks('follow', 0, 2)).toBe(true);
    expect(readsLinks('follow', 2, 2)).toBe(false);
    expect(readsLinks('capture', 0, 2)).toBe(false);
    expect(readsLinks('follow', 0, 0)).toBe(false);
  });
});

describe('computeNotBefore', () => {
  it('is the last finish plus the delay, for the level’s hosts only', () => {
    const last = new Map([
      ['a.test', new Date('2025-01-01T00:00:00.000Z')],
      ['b.test:8080', new Date('2025-01-01T00:00:10.000Z')],
    ]);
    expect(computeNotBefore(last, 2000, ['a.test', 'b.test:8080', 'c.test'])).toEqual({
      'a.test': '2025-01-01T00:00:02.000Z',
      'b.test:8080': '2025-01-01T00:00:12.000Z',
    });
    expect(computeNotBefore(last, 2000, ['c.test'])).toEqual({});
  });

  it('never earlier than the last finish plus the delay', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2_000_000_000_000 }), fc.nat(600_000), (t, delay) => {
        const nb = computeNotBefore(new Map([['h', new Date(t)]]), delay, ['h']);
        expect(Date.parse(nb.h!) - t).toBe(delay);
      }),
    );
  });

  it('uses the delay the flow reported keeping on a host (Crawl-delay) when it is longer', () => {
    const last = new Map([
      ['a.test', new Date('2025-01-01T00:00:00.000Z')],
      ['b.test', new Date('2025-01-01T00:00:00.000Z')],
    ]);
    const reported = new Map([
      ['a.test', 10_000],
      ['b.test', 500],
      ['c.test', 99_000],
    ]);
    expect(computeNotBefore(last, 2000, ['a.test', 'b.test', 'c.test'], reported)).toEqual({
      'a.test': '2025-01-01T00:00:10.000Z',
      'b.test': '2025-01-01T00:00:02.000Z',
    });
  });

  it('is the last finish plus the longer of the two delays (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2_000_000_000_000 }), fc.nat(600_000), fc.option(fc.nat(100_000_000), { nil: undefined }), (t, delay, reported) => {
        const nb = computeNotBefore(new Map([['h', new Date(t)]]), delay, ['h'], reported === undefined ? new Map() : new Map([['h', reported]]));
        expect(Date.parse(nb.h!) - t).toBe(Math.max(delay, reported ?? 0));
      }),
    );
  });
});

describe('decideAfterLevel', () => {
  it('stops at maxDepth', () => {
    expect(decideAfterLevel({ depth: 0, maxDepth: 0, nextLevelPages: 0, cutPages: 0, truncated: false })).toEqual({ kind: 'stop', reason: 'max_depth' });
    expect(decideAfterLevel({ depth: 2, maxDepth: 2, nextLevelPages: 5, cutPages: 0, truncated: false })).toEqual({ kind: 'stop', reason: 'max_depth' });
  });

  it('completes when nothing new was found and nothing was cut', () => {
    expect(decideAfterLevel({ depth: 0, maxDepth: 2, nextLevelPages: 0, cutPages: 0, truncated: false })).toEqual({ kind: 'stop', reason: 'completed' });
  });

  it('goes one level deeper when there is something to take', () => {
    expect(decideAfterLevel({ depth: 0, maxDepth: 2, nextLevelPages: 3, cutPages: 0, truncated: false })).toEqual({ kind: 'next', depth: 1 });
    expect(decideAfterLevel({ depth: 0, maxDepth: 2, nextLevelPages: 3, cutPages: 9, truncated: false })).toEqual({ kind: 'next', depth: 1 });
  });

  it('says max_pages once the cap cut anything, now or earlier', () => {
    expect(decideAfterLevel({ depth: 1, maxDepth: 2, nextLevelPages: 0, cutPages: 4, truncated: false })).toEqual({ kind: 'stop', reason: 'max_pages' });
    expect(decideAfterLevel({ depth: 1, maxDepth: 2, nextLevelPages: 0, cutPages: 0, truncated: true })).toEqual({ kind: 'stop', reason: 'max_pages' });
    expect(decideAfterLevel({ depth: 2, maxDepth: 2, nextLevelPages: 0, cutPages: 0, truncated: true })).toEqual({ kind: 'stop', reason: 'max_pages' });
  });

  it('says max_pages when the cap cut the seeds themselves (maxDepth 0, and nothing found below)', () => {
    expect(decideAfterLevel({ depth: 0, maxDepth: 0, nextLevelPages: 0, cutPages: 0, truncated: false, cutSoFar: 2 })).toEqual({
      kind: 'stop',
      reason: 'max_pages',
    });
    expect(decideAfterLevel({ depth: 0, maxDepth: 2, nextLevelPages: 0, cutPages: 0, truncated: false, cutSoFar: 1 })).toEqual({
      kind: 'stop',
      reason: 'max_pages',
    });
    expect(decideAfterLevel({ depth: 0, maxDepth: 2, nextLevelPages: 1, cutPages: 0, truncated: false, cutSoFar: 1 })).toEqual({ kind: 'next', depth: 1 });
  });

  it('always terminates: the depth only grows and never passes maxDepth', () => {
    fc.assert(
      fc.property(fc.nat(10), fc.nat(10), fc.nat(50), fc.nat(50), fc.boolean(), (depth, maxDepth, next, cut, truncated) => {
        fc.pre(depth <= maxDepth);
        const step = decideAfterLevel({ depth, maxDepth, nextLevelPages: next, cutPages: cut, truncated });
        if (step.kind === 'next') {
          expect(step.depth).toBe(depth + 1);
          expect(step.depth).toBeLessThanOrEqual(maxDepth);
          expect(next).toBeGreaterThan(0);
        } else {
          expect(['completed', 'max_depth', 'max_pages']).toContain(step.reason);
          if (step.reason === 'completed') expect(truncated || cut > 0).toBe(false);
        }
      }),
    );
  });
});
