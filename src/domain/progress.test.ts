import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CrawlProgress, LevelSummary } from './crawl.ts';
import { busiestHosts, progressView, type CrawlFacts, type LevelCounts } from './progress.ts';

const running: CrawlFacts = { id: 'c1', state: 'running', stopReason: null, failure: null, maxDepth: 2, depthReached: 0 };
const counts = (depth: number, over: Partial<LevelCounts> = {}): LevelCounts => ({
  depth,
  pages: 14,
  captured: 0,
  failed: 0,
  skipped: 0,
  pending: 14,
  cut: 0,
  ...over,
});
const summary = (depth: number, over: Partial<LevelSummary> = {}): LevelSummary => ({
  depth,
  dispatched: 14,
  reportId: null,
  captured: 0,
  failed: 0,
  skipped: 0,
  archives: 0,
  nextLevelPages: 0,
  cutPages: 0,
  ...over,
});
const hosts = [{ host: 'a.test:8080', queued: 9, inFlight: 1, nextAllowedAt: '2026-11-30T12:00:02.000Z' }];
const live = (over: Partial<CrawlProgress> = {}): CrawlProgress => ({
  crawlId: 'c1',
  phase: 'waiting',
  depth: 1,
  maxDepth: 2,
  cancelRequested: false,
  stopReason: null,
  failure: null,
  levels: [
    summary(0, { reportId: 'r0', captured: 1 }),
    summary(1, { redispatches: 1, heartbeat: { depth: 1, pagesTotal: 14, pagesDone: 4, pagesInFlight: 1, hosts, receivedAt: '2026-11-30T12:00:00.000Z' } }),
  ],
  ...over,
});

describe('progressView', () => {
  const shownBeat = { receivedAt: '2026-11-30T12:00:00.000Z', pagesTotal: 14, pagesDone: 4, pagesInFlight: 1 };

  it("a running crawl: ledger counts per level, the workflow's dispatches, re-dispatches and heartbeat, and the hosts of the level in flight", () => {
    const v = progressView(running, [counts(0, { pages: 1, captured: 1, pending: 0 }), counts(1)], live());
    expect(v).toMatchObject({ crawlId: 'c1', state: 'running', phase: 'waiting', depth: 1, maxDepth: 2, source: 'workflow', hosts });
    expect(v.levels).toEqual([
      { depth: 0, pages: 1, captured: 1, failed: 0, skipped: 0, pending: 0, cut: 0, dispatched: 14, redispatches: 0, heartbeat: null },
      { depth: 1, pages: 14, captured: 0, failed: 0, skipped: 0, pending: 14, cut: 0, dispatched: 14, redispatches: 1, heartbeat: shownBeat },
    ]);
  });

  it('hosts only while the workflow waits on the level: admitting has no flow state to show', () => {
    expect(progressView(running, [counts(0), counts(1)], live({ phase: 'admitting' })).hosts).toEqual([]);
  });

  it('a level the workflow knows and the ledger has no rows for yet still shows, with zero counts', () => {
    const v = progressView(running, [], live());
    expect(v.levels.map((l) => [l.depth, l.pages, l.dispatched])).toEqual([
      [0, 0, 14],
      [1, 0, 14],
    ]);
  });

  it('a finished crawl (or an unreachable workflow) is the ledger alone', () => {
    const done: CrawlFacts = { ...running, state: 'succeeded', stopReason: 'max_depth', depthReached: 2 };
    const v = progressView(done, [counts(0, { pending: 0, captured: 14 }), counts(2, { cut: 3 })], null);
    expect(v).toMatchObject({ state: 'succeeded', stopReason: 'max_depth', phase: null, depth: 2, source: 'ledger', hosts: [] });
    expect(v.levels.map((l) => [l.depth, l.dispatched, l.redispatches, l.heartbeat, l.cut])).toEqual([
      [0, null, 0, null, 0],
      [2, null, 0, null, 3],
    ]);
  });
});

describe('busiestHosts', () => {
  const h = (host: string, queued: number, inFlight: number) => ({ host, queued, inFlight, nextAllowedAt: null });

  it('keeps hosts in flight first, then the longest queues, drops the finished, and stops at max', () => {
    const hosts = [h('done', 0, 0), h('q1', 1, 0), h('fly', 0, 1), h('q5', 5, 0), h('q5b', 5, 0), h('both', 3, 1)];
    expect(busiestHosts(hosts).map((x) => x.host)).toEqual(['both', 'fly', 'q5', 'q5b', 'q1']);
    expect(busiestHosts(hosts, 2).map((x) => x.host)).toEqual(['both', 'fly']);
  });

  it('never keeps more than max of any list, and only hosts with work', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ host: fc.string(), queued: fc.nat(50), inFlight: fc.integer({ min: 0, max: 1 }), nextAllowedAt: fc.constant(null) }), {
          maxLength: 300,
        }),
        fc.integer({ min: 0, max: 120 }),
        (list, max) => {
          const kept = busiestHosts(list, max);
          expect(kept.length).toBe(Math.min(max, list.filter((x) => x.queued > 0 || x.inFlight > 0).length));
          for (const k of kept) expect(k.queued + k.inFlight).toBeGreaterThan(0);
        },
      ),
    );
  });
});
