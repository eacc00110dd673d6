// robots.txt (RFC 9309) as the capture flow applies it. Pure: the fetch happens elsewhere; this
// turns what it got into a decision per URL and a Crawl-delay, in bounded time (robots-match.ts).
import { stepBudget } from './robots-match.ts';
import { decidePath, groupFor, parseRobotsTxt, robotsPath } from './robots-parse.ts';

/** The product token the flow's User-Agent starts with, matched against robots.txt groups. */
export const ROBOTS_AGENT = 'capture-ledger-flow';

export function robotsUrl(pageUrl: string): string {
  const u = new URL(pageUrl);
  return `${u.protocol}//${u.host}/robots.txt`;
}

/** What fetching robots.txt came to. */
export type RobotsFetch =
  | { kind: 'ok'; body: string }
  /** 4xx: no rules (RFC 9309 2.3.1.3) */
  | { kind: 'unavailable'; status: number }
  /** 5xx or too many redirects: assume complete disallow (RFC 9309 2.3.1.4) */
  | { kind: 'unreachable'; status?: number; reason: string }
  /** the address policy refused the host: nothing was sent, and the page is not fetched either */
  | { kind: 'refused'; reason: string };

/**
 * Crawl-delay is capped here: a day between two captures of one host is already beyond any level
 * deadline, and a larger value (86400 s is 8.6e7 ms; 1e9 s is not) would overflow Node's timers,
 * which fire at once past 2^31-1 ms.
 */
export const MAX_CRAWL_DELAY_MS = 24 * 3600 * 1000;

/**
 * Steps (characters compared, and a rule's length when it is first compiled; robots-match.ts and
 * robots-parse.ts) one URL's decision may take. A decision that would
 * take more is "disallowed": only a robots.txt of thousands of `/*…` rules against a URL of
 * thousands of characters gets there, and waiting for it would hold every other host's captures
 * (this many steps is a few ms, and stays under 50 ms on this machine loaded; bench/robots.ts).
 */
export const MATCH_STEP_BUDGET = 2_000_000;

export interface RobotsRules {
  isAllowed(url: string): boolean;
  /** Crawl-delay for our agent (or *), in ms; undefined when none is given */
  crawlDelayMs: number | undefined;
  /** why everything is disallowed, when it is */
  disallowAll?: string;
  /** the address policy refused the host: the page is not skipped here, its own fetch is refused */
  refused?: string;
}

export function robotsFrom(fetched: RobotsFetch, url: string, agent = ROBOTS_AGENT): RobotsRules {
  if (fetched.kind === 'unavailable') return { isAllowed: () => true, crawlDelayMs: undefined };
  // not "disallowed": the page's own fetch goes through the same policy and fails as refused,
  // which says what happened (a robots skip would not), still without sending anything
  if (fetched.kind === 'refused') return { isAllowed: () => true, crawlDelayMs: undefined, refused: fetched.reason };
  if (fetched.kind === 'unreachable') return { isAllowed: () => false, crawlDelayMs: undefined, disallowAll: fetched.reason };
  const group = groupFor(parseRobotsTxt(fetched.body), agent);
  const delay = group?.crawlDelaySeconds;
  const origin = new URL(robotsUrl(url)).origin;
  return {
    // a URL on another origin is not ours to allow by these rules
    isAllowed: (u: string) => {
      const parsed = new URL(u);
      return parsed.origin === origin && decidePath(group, robotsPath(parsed), stepBudget(MATCH_STEP_BUDGET)) === 'allowed';
    },
    crawlDelayMs: delay !== undefined && Number.isFinite(delay) && delay >= 0 ? Math.min(MAX_CRAWL_DELAY_MS, Math.round(delay * 1000)) : undefined,
  };
}
