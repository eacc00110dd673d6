// robots.txt (RFC 9309) as the capture flow applies it. Pure: the fetch happens elsewhere; this
// turns what it got into a decision per URL and a Crawl-delay.
import robotsParserCjs from 'robots-parser';

// robots-parser is CommonJS (module.exports = function) with typings written as an ES default
// export; under NodeNext the default import is module.exports itself, the function.
interface ParsedRobots {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
}
const robotsParser = robotsParserCjs as unknown as (url: string, body: string) => ParsedRobots;

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
  const robots = robotsParser(robotsUrl(url), fetched.body);
  const delay = robots.getCrawlDelay(agent);
  return {
    // robots-parser answers undefined for a URL on another origin: that is not ours to allow
    isAllowed: (u: string) => robots.isAllowed(u, agent) === true,
    crawlDelayMs: delay !== undefined && Number.isFinite(delay) && delay >= 0 ? Math.min(MAX_CRAWL_DELAY_MS, Math.round(delay * 1000)) : undefined,
  };
}
