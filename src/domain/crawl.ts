// Crawl decisions with no I/O: the request's defaults, the seed level, the per-host pacing
// handed to the flow, how many pages a level may take, and why a crawl stops. The API, the
// activities and the workflow all decide through these functions, so they cannot drift apart.
import { InvalidInputError } from './invalid-input.ts';
import type { LevelHeartbeat } from './liveness.ts';

export type CrawlState = 'running' | 'succeeded' | 'failed';
export const STOP_REASONS = ['completed', 'max_depth', 'max_pages', 'failed'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** Spec, "Not overloading the other end": 2000 ms, 4 hosts, 30 pages (seed included). maxDepth
 * is the spec's own example: deep enough that max_pages is the ordinary outcome. */
export const CRAWL_DEFAULTS = { maxDepth: 2, maxPages: 30, perHostDelayMs: 2000, hostParallelism: 4 } as const;

/** fromTargets means "capture the list once": follow nothing unless asked to. */
export const FROM_TARGETS_DEFAULT_DEPTH = 0;

/** Upper bounds of the request schema: a typo should be a 400, not a week-long crawl. */
export const CRAWL_LIMITS = {
  seeds: 1000,
  seedLength: 2048,
  maxDepth: 20,
  maxPages: 100_000,
  perHostDelayMs: 3_600_000,
  hostParallelism: 64,
  fromTargetsLimit: 100_000,
  /** a page's in-page behaviors (scrolling, media, lazy fetches) at most this long; the capture's deadline bounds it too */
  behaviorsSeconds: 120,
} as const;

/** Every capture runs the in-page behaviors for up to 10 s, the site-specific ones included. */
export const BEHAVIOR_DEFAULTS = { behaviorsSeconds: 10, siteBehaviors: true } as const;

export interface CrawlRequestBody {
  seeds?: string[];
  fromTargets?: { limit?: number };
  rules?: unknown[];
  maxDepth?: number;
  maxPages?: number;
  perHostDelayMs?: number;
  hostParallelism?: number;
  behaviorsSeconds?: number;
  siteBehaviors?: boolean;
  qa?: boolean;
}

export type SeedSource = 'seeds' | 'fromTargets';

export const BOTH_SOURCES_MESSAGE = 'send seeds or fromTargets, not both';
export const NO_SOURCE_MESSAGE = 'seeds or fromTargets is required';

export const NO_BODY_MESSAGE = 'the body must be a JSON object: {"seeds": [...]} or {"fromTargets": {}}';

/** Exactly one of seeds / fromTargets. Both and neither are different mistakes, said differently. */
export function seedSource(body: CrawlRequestBody | null | undefined): SeedSource {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidInputError(NO_BODY_MESSAGE);
  const hasSeeds = body.seeds !== undefined;
  const hasTargets = body.fromTargets !== undefined;
  if (hasSeeds && hasTargets) throw new InvalidInputError(BOTH_SOURCES_MESSAGE);
  if (!hasSeeds && !hasTargets) throw new InvalidInputError(NO_SOURCE_MESSAGE);
  if (hasSeeds && body.seeds!.length === 0) throw new InvalidInputError('seeds must not be empty');
  return hasSeeds ? 'seeds' : 'fromTargets';
}

export interface CrawlLimits {
  maxDepth: number;
  maxPages: number;
  perHostDelayMs: number;
  hostParallelism: number;
}

/** The limits the crawl runs with. fromTargets: depth 0 unless given, and never fewer pages than
 * seeds (the ordinary default of 30 would silently truncate a longer target list). */
export function resolveLimits(body: CrawlRequestBody, source: SeedSource, seedCount: number): CrawlLimits {
  const maxDepth = body.maxDepth ?? (source === 'fromTargets' ? FROM_TARGETS_DEFAULT_DEPTH : CRAWL_DEFAULTS.maxDepth);
  const requestedPages = body.maxPages ?? CRAWL_DEFAULTS.maxPages;
  const maxPages = source === 'fromTargets' ? Math.max(requestedPages, seedCount) : requestedPages;
  return {
    maxDepth,
    maxPages,
    perHostDelayMs: body.perHostDelayMs ?? CRAWL_DEFAULTS.perHostDelayMs,
    hostParallelism: body.hostParallelism ?? CRAWL_DEFAULTS.hostParallelism,
  };
}

/** What each capture of the crawl runs in the page after load: seconds of budget (0: none), and
 * whether a site's own behavior (browsertrix-behaviors' site-specific ones) may replace scrolling. */
export interface CrawlBehaviors {
  behaviorsSeconds: number;
  siteBehaviors: boolean;
}

export function resolveBehaviors(body: CrawlRequestBody): CrawlBehaviors {
  return {
    behaviorsSeconds: body.behaviorsSeconds ?? BEHAVIOR_DEFAULTS.behaviorsSeconds,
    siteBehaviors: body.siteBehaviors ?? BEHAVIOR_DEFAULTS.siteBehaviors,
  };
}

/** A URL's fragment is a position inside a page, not another page; nothing else is normalised. */
export function dropFragment(url: string): string {
  const i = url.indexOf('#');
  return i === -1 ? url : url.slice(0, i);
}

/**
 * A seed as the crawl records it: the URL parser's serialisation (as links are resolved, so a
 * link back to a seed deduplicates against it), fragment dropped. Null for anything that is not
 * an absolute http(s) URL.
 */
export function normalizeSeed(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  u.hash = '';
  return u.href;
}

/** The host a page is paced by: host name with its port, as URL.host has it. */
export function hostOf(url: string): string {
  return new URL(url).host;
}

/** How many of `landed` new pages a level may take when `used` pages are already taken. */
export function levelSlots(used: number, maxPages: number): number {
  return Math.max(0, maxPages - used);
}

/** The seed level: distinct seeds in the order given, cut at maxPages. */
export function planSeedLevel(seeds: readonly string[], maxPages: number): { take: string[]; cut: string[] } {
  const distinct = [...new Set(seeds)];
  const slots = levelSlots(0, maxPages);
  return { take: distinct.slice(0, slots), cut: distinct.slice(slots) };
}

/**
 * Per host: the earliest moment the next capture may be submitted — the last finish on that
 * host plus the delay, so spacing holds across levels as it does inside one. The delay is the
 * crawl's perHostDelayMs, or the delay the flow reported keeping on that host (robots.txt
 * Crawl-delay) when that is longer: the flow that learnt it may be gone by the next level. Only
 * the hosts the level touches, only those with a finish on record.
 */
export function computeNotBefore(
  lastFinish: ReadonlyMap<string, Date>,
  delayMs: number,
  hosts: Iterable<string>,
  reportedDelayMs: ReadonlyMap<string, number> = new Map(),
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const host of new Set(hosts)) {
    const last = lastFinish.get(host);
    if (last === undefined) continue;
    const reported = reportedDelayMs.get(host);
    const delay = reported !== undefined && Number.isFinite(reported) && reported > delayMs ? reported : delayMs;
    out[host] = new Date(last.getTime() + delay).toISOString();
  }
  return out;
}

export interface LevelOutcome {
  /** the depth just admitted */
  depth: number;
  maxDepth: number;
  /** pages waiting at depth + 1 */
  nextLevelPages: number;
  /** pages found for depth + 1 that maxPages left out */
  cutPages: number;
  /** whether maxPages cut anything at an earlier level */
  truncated: boolean;
  /** pages the cap cut anywhere in the crawl so far, seeds included, as the ledger has them */
  cutSoFar?: number;
}

export type NextStep = { kind: 'next'; depth: number } | { kind: 'stop'; reason: Exclude<StopReason, 'failed'> };

/**
 * After a level is admitted: go one level deeper, or stop and say why. maxPages having cut
 * anything wins (the crawl was cut off by the page cap), then maxDepth, and `completed` only
 * when nothing was left out and nothing new was found.
 */
export function decideAfterLevel(o: LevelOutcome): NextStep {
  const truncated = o.truncated || o.cutPages > 0 || (o.cutSoFar ?? 0) > 0;
  if (o.depth >= o.maxDepth) return { kind: 'stop', reason: truncated ? 'max_pages' : 'max_depth' };
  if (o.nextLevelPages > 0) return { kind: 'next', depth: o.depth + 1 };
  return { kind: 'stop', reason: truncated ? 'max_pages' : 'completed' };
}

/** Whether a level's pages ask the flow for links: only follow pages below maxDepth are read. */
export function readsLinks(action: 'follow' | 'capture', depth: number, maxDepth: number): boolean {
  return action === 'follow' && depth < maxDepth;
}

/** What `progress` answers (query on the crawl workflow). */
export interface CrawlProgress {
  crawlId: string;
  phase: 'starting' | 'dispatching' | 'waiting' | 'admitting' | 'finishing' | 'done';
  depth: number;
  maxDepth: number;
  cancelRequested: boolean;
  levels: LevelSummary[];
  stopReason: StopReason | null;
  failure: string | null;
}

export interface LevelSummary {
  depth: number;
  dispatched: number;
  reportId: string | null;
  captured: number;
  failed: number;
  skipped: number;
  archives: number;
  nextLevelPages: number;
  cutPages: number;
  /** times the level was dispatched again after its heartbeats stopped */
  redispatches?: number;
  /** the latest heartbeat of the level's current dispatch (the flow's own progress) */
  heartbeat?: LevelHeartbeat | null;
}
