// robots.txt per origin, fetched once and kept for a while (RFC 9309 allows up to 24 h; the
// default here is shorter so a changed test site is seen). Concurrent asks share one fetch.
import { robotsFrom, robotsUrl, type RobotsFetch, type RobotsRules } from '../domain/robots.ts';
import { setRecent } from '../domain/recent.ts';
import { fetchFollowing, FetchError } from './fetch.ts';
import type { Fetcher } from './fetcher.ts';

/** RFC 9309 2.5: parse at least the first 500 KiB. */
const MAX_ROBOTS_BYTES = 500 * 1024;

/** The whole robots.txt fetch, redirects included: a server dripping a byte every few seconds
 * cannot hold a host's captures beyond it. */
export const ROBOTS_DEADLINE_MS = 15_000;

/**
 * Fetches robots.txt: 2xx → its rules; 4xx → no rules; 5xx → everything disallowed. A host that
 * cannot be reached at all is not disallowed here: its page capture then fails as a network
 * error, which says what happened ("skipped by robots" would not). A host the address policy
 * refuses is 'refused': nothing was sent, and its pages fail as refused.
 */
export async function fetchRobotsTxt(fetcher: Fetcher, pageUrl: string, userAgent: string, deadlineMs = ROBOTS_DEADLINE_MS): Promise<RobotsFetch> {
  const deadline = AbortSignal.timeout(deadlineMs);
  try {
    const r = await fetchFollowing(fetcher, robotsUrl(pageUrl), {
      userAgent,
      maxRedirects: 5,
      timeoutMs: deadlineMs,
      signal: deadline,
      accept: 'text/plain,*/*;q=0.5',
      maxBytes: 4 * MAX_ROBOTS_BYTES,
    });
    const status = r.final.response.status;
    if (status >= 200 && status < 300) return { kind: 'ok', body: r.final.response.body.subarray(0, MAX_ROBOTS_BYTES).toString('utf8') };
    if (status >= 400 && status < 500) return { kind: 'unavailable', status };
    if (status >= 500) return { kind: 'unreachable', status, reason: `robots.txt answered ${status}` };
    return { kind: 'unavailable', status };
  } catch (err) {
    if (err instanceof FetchError && err.type === 'refused') return { kind: 'refused', reason: err.message };
    if (err instanceof FetchError && err.type === 'redirects') return { kind: 'unreachable', reason: `robots.txt: ${err.message}` };
    return { kind: 'unavailable', status: 0 };
  }
}

/**
 * Origins whose robots.txt a worker keeps at once. A worker runs for days and meets thousands of
 * hosts, each robots.txt up to MAX_ROBOTS_BYTES: past this many, the origin asked for least
 * recently is forgotten (and fetched again if it comes back).
 */
export const ROBOTS_CACHE_ORIGINS = 1000;

type Entry = { at: number; rules: Promise<RobotsRules>; host: string; delay?: number };

export class RobotsCache {
  /** in the order last asked for, oldest first */
  private readonly entries = new Map<string, Entry>();

  private readonly fetchRobots: (pageUrl: string) => Promise<RobotsFetch>;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly maxOrigins: number;

  constructor(fetchRobots: (pageUrl: string) => Promise<RobotsFetch>, ttlMs: number, now: () => number = Date.now, maxOrigins = ROBOTS_CACHE_ORIGINS) {
    this.fetchRobots = fetchRobots;
    this.ttlMs = ttlMs;
    this.now = now;
    this.maxOrigins = maxOrigins;
  }

  /** How many origins it holds now. */
  get size(): number {
    return this.entries.size;
  }

  get(pageUrl: string): Promise<RobotsRules> {
    const u = new URL(pageUrl);
    const origin = `${u.protocol}//${u.host}`;
    const hit = this.entries.get(origin);
    if (hit !== undefined && this.now() - hit.at < this.ttlMs) {
      setRecent(this.entries, origin, hit, this.maxOrigins);
      return hit.rules;
    }
    const entry: Entry = {
      at: this.now(),
      host: u.host,
      rules: this.fetchRobots(pageUrl).then((f) => {
        const rules = robotsFrom(f, pageUrl);
        entry.delay = rules.crawlDelayMs;
        return rules;
      }),
    };
    setRecent(this.entries, origin, entry, this.maxOrigins);
    return entry.rules;
  }

  /** Crawl-delays already known (ms), by host with port, for robots.txt still fresh. */
  knownCrawlDelays(): Record<string, number> {
    const out: Record<string, number> = {};
    const now = this.now();
    for (const e of this.entries.values()) if (e.delay !== undefined && now - e.at < this.ttlMs) out[e.host] = Math.max(out[e.host] ?? 0, e.delay);
    return out;
  }
}
