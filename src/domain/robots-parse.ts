// robots.txt (RFC 9309) read into groups of rules, compiled for robots-match.ts when first used. Groups
// are read as robots-parser 3 read them (which this replaces: its matcher is quadratic): a run of
// User-agent lines opens a group, groups naming the same agent are merged, and an agent's own
// group wins over `*`. Rules are kept longest first, Allow before Disallow at equal length, so the
// first rule that matches is the one RFC 9309 picks.
import { compilePattern, matchesPattern, subject, type CompiledPattern, type StepBudget } from './robots-match.ts';

export interface RobotsRule {
  /** percent-encoding normalised; its length ranks matches */
  pattern: string;
  allow: boolean;
  /** compiled when a decision first needs it: reading a 500 KiB file stays cheap */
  compiled?: CompiledPattern;
}

export interface RobotsGroup {
  rules: RobotsRule[];
  crawlDelaySeconds?: number;
}

/** Agent (lower case, version stripped) → its merged group. */
export type RobotsGroups = Map<string, RobotsGroup>;

/** `Name/1.2` → `name`: the product token groups are named by. */
export function agentToken(agent: string): string {
  const lower = agent.toLowerCase();
  const slash = lower.indexOf('/');
  return (slash >= 0 ? lower.slice(0, slash) : lower).trim();
}

/** Percent-escapes in upper case, as RFC 9309 2.2.2 compares them. */
function upperEscapes(s: string): string {
  return s.replace(/%[0-9a-fA-F]{2}/g, (m) => m.toUpperCase());
}

/** A pattern as robots-parser normalised it: non-ASCII encoded, existing escapes kept. */
export function normalisePattern(pattern: string): string {
  // what encodeURI leaves as it is, with no escape to upper-case: most rules
  if (/^[A-Za-z0-9\-_.!~*'();/?:@&=+$,#]*$/.test(pattern)) return pattern;
  try {
    return upperEscapes(encodeURI(pattern).replace(/%25/g, '%'));
  } catch {
    return pattern;
  }
}

/** The path and query robots rules are matched against. */
export function robotsPath(u: URL): string {
  return upperEscapes(u.pathname + u.search);
}

function lineOf(raw: string): [string, string] | null {
  const hash = raw.indexOf('#');
  const line = hash >= 0 ? raw.slice(0, hash) : raw;
  const colon = line.indexOf(':');
  if (colon < 0) return null;
  return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
}

export function parseRobotsTxt(body: string): RobotsGroups {
  const groups: RobotsGroups = new Map();
  const groupOf = (agent: string): RobotsGroup => {
    let g = groups.get(agent);
    if (g === undefined) groups.set(agent, (g = { rules: [] }));
    return g;
  };
  let agents: string[] = [];
  let inAgentLines = false;
  for (const raw of body.split(/\r\n|\r|\n/)) {
    const line = lineOf(raw);
    if (line === null || line[0] === '') continue;
    const [key, value] = line;
    if (key === 'user-agent') {
      if (!inAgentLines) agents = [];
      if (value !== '') agents.push(agentToken(value));
    } else if (key === 'allow' || key === 'disallow') {
      for (const a of agents) {
        const g = groupOf(a);
        if (value !== '') g.rules.push({ pattern: normalisePattern(value), allow: key === 'allow' });
      }
    } else if (key === 'crawl-delay') {
      const delay = Number(value);
      for (const a of agents) {
        const g = groupOf(a);
        if (!Number.isNaN(delay)) g.crawlDelaySeconds = delay;
      }
    }
    inAgentLines = key === 'user-agent';
  }
  for (const g of groups.values()) g.rules.sort(byPrecedence);
  return groups;
}

/** Longest pattern first; at equal length Allow first (RFC 9309 2.2.2). Stable otherwise. */
function byPrecedence(a: RobotsRule, b: RobotsRule): number {
  return b.pattern.length - a.pattern.length || Number(b.allow) - Number(a.allow);
}

/** The group that applies to `agent`: its own, else `*`, else none. */
export function groupFor(groups: RobotsGroups, agent: string): RobotsGroup | undefined {
  return groups.get(agentToken(agent)) ?? groups.get('*');
}

export type RobotsDecision = 'allowed' | 'disallowed' | 'over-budget';

/**
 * What the group says of `path`: the first rule in precedence order that matches decides, and no
 * matching rule allows. 'over-budget' when the budget ran out before that was known.
 */
export function decidePath(group: RobotsGroup | undefined, path: string, budget: StepBudget): RobotsDecision {
  const s = subject(path);
  for (const r of group?.rules ?? []) {
    if (r.compiled === undefined) {
      budget.left -= r.pattern.length;
      budget.spent += r.pattern.length;
      r.compiled = compilePattern(r.pattern);
    }
    const hit = matchesPattern(r.compiled, s, budget);
    if (budget.left < 0) return 'over-budget';
    if (hit) return r.allow ? 'allowed' : 'disallowed';
  }
  return 'allowed';
}
