import { describe, expect, it } from 'vitest';
import { DEFAULT_LEVEL_DEADLINE_MS, HostLog, levelPrefix, levelWindow, parseNotBefore, REPORT_LIMITS, withinLimits } from './level.ts';

describe('level helpers', () => {
  it('keys a level’s objects under captures/<crawlId>/<depth>', () => {
    expect(levelPrefix({ crawlId: 'c1', depth: 2 })).toBe('captures/c1/2');
  });
  it('parses notBefore per host and refuses what is not a date', () => {
    expect(parseNotBefore({ 'a:1': '2024-01-01T00:00:00.500Z' })).toEqual({ 'a:1': Date.parse('2024-01-01T00:00:00.500Z') });
    expect(() => parseNotBefore({ 'a:1': 'soon' })).toThrow(/notBefore\["a:1"\]/);
  });
  it('keeps a report within the route’s limits', () => {
    const long = withinLimits({ url: 'u', status: 'failed', manifestError: 'x'.repeat(10_000), finalUrl: `http://h/${'y'.repeat(9000)}` });
    expect(long.manifestError).toHaveLength(REPORT_LIMITS.manifestError);
    expect(long.finalUrl).toBeUndefined();
    const ok = { url: 'u', status: 'captured' as const, finalUrl: 'http://h/', taskId: 't' };
    expect(withinLimits(ok)).toEqual(ok);
  });
  it('records captures per host and the last finish', () => {
    const log = new HostLog();
    log.record('h:1', { crawlId: 'c', depth: 0, url: 'u1', taskId: 't1', submittedAt: 10, finishedAt: 20 });
    log.record('h:1', { crawlId: 'c', depth: 0, url: 'u2', taskId: 't2', submittedAt: 30, finishedAt: 25 });
    log.record('k:1', { crawlId: 'c', depth: 0, url: 'u3', taskId: 't3', submittedAt: 1, finishedAt: 2 });
    expect(log.lastFinishes()).toEqual({ 'h:1': 25, 'k:1': 2 });
    expect(log.get('h:1').map((c) => c.taskId)).toEqual(['t1', 't2']);
    expect(log.get('nope')).toEqual([]);
    expect(Object.keys(log.all())).toEqual(['h:1', 'k:1']);
  });
  it('keeps the newest captures of a host, and forgets the hosts recorded to least recently past its total', () => {
    const log = new HostLog({ perHost: 3, total: 5 });
    const capture = (i: number) => ({ crawlId: 'c', depth: 0, url: `u${i}`, taskId: `t${i}`, submittedAt: i, finishedAt: i + 1 });
    for (let i = 1; i <= 4; i++) log.record('a:1', capture(i));
    expect(log.get('a:1').map((c) => c.taskId)).toEqual(['t2', 't3', 't4']);
    log.record('b:1', capture(5));
    log.record('c:1', capture(6));
    expect(Object.keys(log.all())).toEqual(['a:1', 'b:1', 'c:1']);
    // a is the least recently recorded to: six captures kept are one too many, so a goes
    log.record('b:1', capture(7));
    expect(Object.keys(log.all())).toEqual(['c:1', 'b:1']);
    expect(log.lastFinishes()).toEqual({ 'c:1': 7, 'b:1': 8 });
    // d's three and b's two are five: c, recorded to least recently, goes
    for (let i = 8; i <= 20; i++) log.record('d:1', capture(i));
    expect(Object.keys(log.all())).toEqual(['b:1', 'd:1']);
    expect(log.get('d:1').map((c) => c.taskId)).toEqual(['t18', 't19', 't20']);
  });
  it('a worker recording 200,000 captures on 20,000 hosts keeps at most 50,000 of them (a host goes whole)', () => {
    const log = new HostLog();
    for (let i = 0; i < 200_000; i++) log.record(`h${i % 20_000}:80`, { crawlId: 'c', depth: 0, url: 'u', taskId: `t${i}`, submittedAt: i, finishedAt: i });
    const kept = Object.values(log.all()).reduce((n, l) => n + l.length, 0);
    expect(kept).toBeLessThanOrEqual(50_000);
    expect(kept).toBeGreaterThan(50_000 - 10);
  });
});

describe('levelWindow', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const at = (ms: number): string => new Date(now + ms).toISOString();
  it('keeps a quarter of the time left, at most 30 s, for packaging and the report; visits end halfway into it', () => {
    expect(levelWindow(at(3_600_000), now)).toEqual({ startBy: now + 3_600_000 - 30_000, finishBy: now + 3_600_000 - 15_000 });
    expect(levelWindow(at(60_000), now)).toEqual({ startBy: now + 45_000, finishBy: now + 52_500 });
  });
  it('gives a dispatch without a deadline (or an unreadable one) 30 minutes', () => {
    expect(levelWindow(undefined, now).startBy).toBe(now + DEFAULT_LEVEL_DEADLINE_MS - 30_000);
    expect(levelWindow('soon', now).startBy).toBe(now + DEFAULT_LEVEL_DEADLINE_MS - 30_000);
  });
  it('a deadline already past leaves no time at all', () => {
    expect(levelWindow(at(-5000), now)).toEqual({ startBy: now - 5000, finishBy: now - 5000 });
  });
});
