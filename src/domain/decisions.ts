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

/** Tallies decisions per (rule, host name), counting each URL once; groups in the order first met. */
export class DecisionTallies {
  private readonly seen = new Set<string>();
  private readonly groups = new Map<string, DecisionTally>();

  add(d: LinkDecision): void {
    if (this.seen.has(d.url)) return;
    this.seen.add(d.url);
    const id = `${d.rule}\u0000${d.hostname}`;
    let g = this.groups.get(id);
    if (g === undefined) {
      g = { rule: d.rule, action: d.action, hostname: d.hostname, links: 0, samples: [] };
      this.groups.set(id, g);
    }
    g.links += 1;
    if (g.samples.length < MAX_SAMPLES) g.samples.push(d.url);
  }

  toArray(): DecisionTally[] {
    return [...this.groups.values()].map((g) => ({ ...g, samples: [...g.samples] }));
  }
}

export function tallyDecisions(decisions: Iterable<LinkDecision>): DecisionTally[] {
  const t = new DecisionTallies();
  for (const d of decisions) t.add(d);
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
