// What the rules decided, tallied per rule and host name (crawl_decisions), and the pages robots.txt
// kept out, grouped per host name. Pure logic, no I/O.
import type { RuleAction } from './rules/index.ts';
import { hostnameOf } from './rules/url-key.ts';

export const MAX_SAMPLES = 5;

/** One crawl_decisions row of a level: how many distinct URLs a rule took on a host. */
export interface DecisionTally {
  /** 1-based; 0 = no rule matched */
  rule: number;
  action: RuleAction;
  /** host name, port dropped */
  hostname: string;
  /** distinct URLs */
  links: number;
  /** up to MAX_SAMPLES URLs, in the order they were met */
  samples: string[];
}

export interface LinkDecision {
  url: string;
  hostname: string;
  rule: number;
  action: RuleAction;
}

/**
 * Tallies decisions per (rule, host name), groups in the order first met. The caller adds each URL
 * once (a level's selector decides a URL once; tallyDecisions drops repeats): looking every URL up
 * again here cost a tenth of selecting a 10,000-page level.
 */
export class DecisionTallies {
  /** by rule number, then host name */
  private readonly byRule: Map<string, DecisionTally>[] = [];
  private readonly groups: DecisionTally[] = [];

  add(d: LinkDecision): void {
    const hosts = (this.byRule[d.rule] ??= new Map());
    let g = hosts.get(d.hostname);
    if (g === undefined) {
      g = { rule: d.rule, action: d.action, hostname: d.hostname, links: 0, samples: [] };
      hosts.set(d.hostname, g);
      this.groups.push(g);
    }
    g.links += 1;
    if (g.samples.length < MAX_SAMPLES) g.samples.push(d.url);
  }

  toArray(): DecisionTally[] {
    return this.groups.map((g) => ({ ...g, samples: [...g.samples] }));
  }
}

/** Tallies decisions, counting each URL once. */
export function tallyDecisions(decisions: Iterable<LinkDecision>): DecisionTally[] {
  const t = new DecisionTallies();
  const seen = new Set<string>();
  for (const d of decisions) {
    if (seen.has(d.url)) continue;
    seen.add(d.url);
    t.add(d);
  }
  return t.toArray();
}

export interface RobotsGroup {
  hostname: string;
  pages: number;
  samples: string[];
}

/** Pages robots.txt kept out, per host name (port dropped), distinct URLs, in the order given. */
export function groupRobots(urls: Iterable<string>): RobotsGroup[] {
  const seen = new Set<string>();
  const groups = new Map<string, RobotsGroup>();
  for (const url of urls) {
    if (seen.has(url)) continue;
    seen.add(url);
    const hostname = hostnameOf(url) ?? '';
    let g = groups.get(hostname);
    if (g === undefined) {
      g = { hostname, pages: 0, samples: [] };
      groups.set(hostname, g);
    }
    g.pages += 1;
    if (g.samples.length < MAX_SAMPLES) g.samples.push(url);
  }
  return [...groups.values()];
}

/** One crawl_refusals row of a level: URLs the address policy or a limit kept out, per host and code. */
export interface RefusalTally {
  /** host name, port dropped, cut to 253 characters (a longer one is itself a refusal) */
  hostname: string;
  /** the address policy's code, or 'too-many-links' (a page's links past the per-page cap) */
  code: string;
  urls: number;
  /** up to MAX_SAMPLES URLs, shortened */
  samples: string[];
}

const MAX_STORED_HOSTNAME = 253;
const MAX_SAMPLE_LENGTH = 300;

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** Tallies refusals per (host name, code), counting each URL once, in the order first met. */
export class RefusalTallies {
  private readonly seen = new Set<string>();
  private readonly groups = new Map<string, RefusalTally>();

  add(url: string, hostname: string, code: string, count = 1): void {
    const key = `${code}\u0000${url}`;
    if (count === 1 && this.seen.has(key)) return;
    this.seen.add(key);
    const host = clip(hostname, MAX_STORED_HOSTNAME);
    const id = `${code}\u0000${host}`;
    let g = this.groups.get(id);
    if (g === undefined) {
      g = { hostname: host, code, urls: 0, samples: [] };
      this.groups.set(id, g);
    }
    g.urls += count;
    if (g.samples.length < MAX_SAMPLES) g.samples.push(clip(url, MAX_SAMPLE_LENGTH));
  }

  /** Adds a tally made elsewhere (the same host and code add up). */
  addTally(t: RefusalTally): void {
    const id = `${t.code}\u0000${t.hostname}`;
    const g = this.groups.get(id);
    if (g === undefined) this.groups.set(id, { ...t, samples: t.samples.slice(0, MAX_SAMPLES) });
    else {
      g.urls += t.urls;
      for (const s of t.samples) if (g.samples.length < MAX_SAMPLES) g.samples.push(s);
    }
  }

  toArray(): RefusalTally[] {
    return [...this.groups.values()].map((g) => ({ ...g, samples: [...g.samples] }));
  }
}
