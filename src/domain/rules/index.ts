// Crawl rules: what a crawl follows, captures or skips. Pure logic, no I/O.
//
// A rule is an object with one key, the action, whose value is the pattern:
//   - a scope: same-origin, same-host (port included), same-site (registrable domain, Public Suffix
//     List with its private section; an IP address or localhost is a site of its own), any —
//     compared with the seeds: a URL is same-site if it is same-site with ANY seed;
//   - a lower-case host name: that host and its subdomains at a label boundary;
//   - an http(s) URL prefix, stored normalised (patterns.ts), compared as a plain string prefix.
// Rules are tried from the top, the first match decides, no match skips (rule 0). Before anything
// is matched a URL is reduced to its key (url-key.ts): only http(s), fragment and userinfo ignored,
// trailing host dots dropped.
//
// Validation claims "can never match" only when certain, with exactly the spec's relations:
// any covers everything; same-site covers same-host covers same-origin (and each scope itself);
// a domain covers itself and its subdomains; same-site covers a domain on a seed's site (only when
// no Public Suffix List entry lies below that domain, see psl.ts); a URL prefix is covered by an
// equal or shorter prefix, or by a scope or domain its own URL falls in.
import { InvalidInputError } from '../invalid-input.ts';
import { parsePattern, underDomain, type ParsedPattern, type PatternKind, type Scope } from './patterns.ts';
import { hasSuffixRulesBelow, isIpLiteral, registrableDomain } from './psl.ts';
import { UrlKeys } from '../link-resolution.ts';
import { urlKey, type UrlKey } from './url-key.ts';

export type RuleAction = 'follow' | 'capture' | 'skip';
/** As received: { follow: 'same-site' } (one key). */
export type RuleInput = Record<string, unknown>;
/** Fixed (normalised) form. */
export type Rule = { action: RuleAction; pattern: string };

export const RULE_ACTIONS: readonly RuleAction[] = ['follow', 'capture', 'skip'];
export const MIN_RULES = 1;
export const MAX_RULES = 32;
export const MAX_PATTERN_LENGTH = 2048;
export const DEFAULT_RULES: RuleInput[] = [{ follow: 'same-origin' }];

const PATTERN_JSON_SCHEMA = { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH } as const;

/**
 * One rule: exactly one of follow / capture / skip. propertyNames (not additionalProperties: false)
 * so an unknown key is a 400 even under fastify's default removeAdditional.
 */
export const RULE_JSON_SCHEMA = {
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  propertyNames: { enum: ['follow', 'capture', 'skip'] },
  properties: { follow: PATTERN_JSON_SCHEMA, capture: PATTERN_JSON_SCHEMA, skip: PATTERN_JSON_SCHEMA },
} as const;

/** The shape of `rules` in a crawl request: 1 to 32 rules, one key each, patterns of 1..2048 characters. */
export const RULES_JSON_SCHEMA = {
  type: 'array',
  minItems: MIN_RULES,
  maxItems: MAX_RULES,
  items: RULE_JSON_SCHEMA,
} as const;

export interface ShapeProblem {
  rule?: number;
  problem: string;
}

/** Length in characters (code points), as JSON Schema's maxLength counts them. */
function characters(s: string): number {
  let n = 0;
  for (const _ of s) n += 1;
  return n;
}

/** What the schema checks, for callers that did not come through one. Empty when the shape is right. */
export function ruleShapeProblems(rules: unknown): ShapeProblem[] {
  if (!Array.isArray(rules)) return [{ problem: 'rules is a list of rules' }];
  if (rules.length < MIN_RULES || rules.length > MAX_RULES) {
    return [{ problem: `a crawl has ${MIN_RULES} to ${MAX_RULES} rules, not ${rules.length}` }];
  }
  const problems: ShapeProblem[] = [];
  rules.forEach((r: unknown, i) => {
    const rule = i + 1;
    if (typeof r !== 'object' || r === null || Array.isArray(r)) {
      problems.push({ rule, problem: 'a rule is an object with one key: follow, capture or skip' });
      return;
    }
    const keys = Object.keys(r);
    if (keys.length !== 1) {
      problems.push({ rule, problem: `a rule has exactly one key, not ${keys.length}` });
      return;
    }
    const action = keys[0]!;
    if (!(RULE_ACTIONS as readonly string[]).includes(action)) {
      problems.push({ rule, problem: `unknown action ${JSON.stringify(action)}: one of follow, capture, skip` });
      return;
    }
    const pattern = (r as Record<string, unknown>)[action];
    if (typeof pattern !== 'string' || characters(pattern) < 1 || characters(pattern) > MAX_PATTERN_LENGTH) {
      problems.push({ rule, problem: `a pattern is a string of 1 to ${MAX_PATTERN_LENGTH} characters` });
    }
  });
  return problems;
}

/** `action:pattern` as the check route takes it (split at the first colon); null when not that shape. */
export function parseRuleParam(param: string): RuleInput | null {
  const colon = param.indexOf(':');
  if (colon < 0) return null;
  const action = param.slice(0, colon);
  const pattern = param.slice(colon + 1);
  if (!(RULE_ACTIONS as readonly string[]).includes(action)) return null;
  if (characters(pattern) < 1 || characters(pattern) > MAX_PATTERN_LENGTH) return null;
  return { [action]: pattern };
}

function actionOf(input: RuleInput): { action: RuleAction; pattern: string } {
  const action = Object.keys(input)[0] as RuleAction;
  return { action, pattern: input[action] as string };
}

// ---------------------------------------------------------------------------------------------
// Matching

interface SeedSet {
  origins: Set<string>;
  hosts: Set<string>;
  sites: Set<string>;
}

function seedSet(seeds: readonly string[], keys = new UrlKeys()): SeedSet {
  const set: SeedSet = { origins: new Set(), hosts: new Set(), sites: new Set() };
  for (const s of seeds) {
    const k = keys.keyOf(s);
    if (k === null) continue;
    set.origins.add(k.origin);
    set.hosts.add(k.host);
    set.sites.add(k.site);
  }
  return set;
}

function scopeMatches(scope: Scope, key: UrlKey, seeds: SeedSet): boolean {
  switch (scope) {
    case 'any':
      return true;
    case 'same-origin':
      return seeds.origins.has(key.origin);
    case 'same-host':
      return seeds.hosts.has(key.host);
    case 'same-site':
      return seeds.sites.has(key.site);
  }
}

function patternMatches(p: ParsedPattern, key: UrlKey, seeds: SeedSet): boolean {
  switch (p.kind) {
    case 'scope':
      return scopeMatches(p.scope, key, seeds);
    case 'domain':
      return underDomain(key.hostname, p.ascii);
    case 'prefix':
      return key.href.startsWith(p.pattern);
    case 'invalid':
      return false;
  }
}

export interface Decision {
  /** 1-based; 0 = no rule matched */
  rule: number;
  action: RuleAction;
}

const NO_RULE: Decision = Object.freeze({ rule: 0, action: 'skip' });

/** Rules compiled once against the seeds; decide() is then cheap per URL. */
export interface CompiledRules {
  decide(url: string): Decision;
  decideKey(key: UrlKey): Decision;
}

export function compileRules(rules: readonly Rule[], seeds: readonly string[]): CompiledRules {
  const parsed = rules.map((r) => ({ action: r.action, p: parsePattern(r.pattern) }));
  const keys = new UrlKeys();
  const set = seedSet(seeds, keys);
  const decideKey = (key: UrlKey): Decision => {
    for (let i = 0; i < parsed.length; i += 1) {
      const r = parsed[i]!;
      if (patternMatches(r.p, key, set)) return { rule: i + 1, action: r.action };
    }
    return NO_RULE;
  };
  return {
    decideKey,
    decide(url: string): Decision {
      const key = keys.keyOf(url);
      return key === null ? NO_RULE : decideKey(key);
    },
  };
}

/** First match wins; rule numbers from 1; 0 = no rule matched (→ skip). Total: any string gets an answer. */
export function decide(rules: Rule[], seeds: string[], url: string): Decision {
  return compileRules(rules, seeds).decide(url);
}

// ---------------------------------------------------------------------------------------------
// Coverage

const SCOPE_RANK: Record<Scope, number> = { 'same-origin': 0, 'same-host': 1, 'same-site': 2, any: 3 };

/** Every host name under `domain` has a site among the seeds' sites — certain, not likely. */
function domainOnSeedSite(domain: string, seeds: SeedSet): boolean {
  if (isIpLiteral(domain)) return seeds.sites.has(domain); // an IP address has no subdomains
  const site = registrableDomain(domain);
  return site !== null && seeds.sites.has(site) && !hasSuffixRulesBelow(domain);
}

/** Does earlier pattern `a` match every URL later pattern `b` would? Only the spec's relations. */
function covers(a: ParsedPattern, b: ParsedPattern, seeds: SeedSet): boolean {
  if (a.kind === 'invalid' || b.kind === 'invalid') return false;
  if (a.kind === 'scope') {
    if (a.scope === 'any') return true;
    if (b.kind === 'scope') return b.scope !== 'any' && SCOPE_RANK[b.scope] <= SCOPE_RANK[a.scope];
    if (b.kind === 'domain') return a.scope === 'same-site' && domainOnSeedSite(b.ascii, seeds);
    return scopeMatches(a.scope, b.key, seeds); // a prefix's URL fixes its scheme, host and port
  }
  if (a.kind === 'domain') {
    if (b.kind === 'domain') return underDomain(b.ascii, a.ascii);
    if (b.kind === 'prefix') return underDomain(b.key.hostname, a.ascii);
    return false;
  }
  return b.kind === 'prefix' && b.pattern.startsWith(a.pattern);
}

// ---------------------------------------------------------------------------------------------
// Checking a list

export interface SeedReport {
  url: string;
  valid: boolean;
  site?: string;
  followed?: boolean;
}

export interface RuleReport {
  rule: number;
  action: RuleAction;
  kind?: PatternKind;
  pattern: string;
  coveredBy?: number;
  valid?: boolean;
  /** why an invalid pattern is invalid */
  reason?: string;
}

interface Analysis {
  seeds: SeedReport[];
  rules: RuleReport[];
  fixed: RuleInput[];
  normalised: Rule[];
  invalidSeeds: string[];
  invalidPatterns: { rule: number; pattern: string }[];
  covered: { rule: number; coveredBy: number }[];
  unfollowedSeeds: string[];
}

function analyse(seeds: string[], inputs: RuleInput[]): Analysis {
  const set = seedSet(seeds);
  const parsed = inputs.map((input) => {
    const { action, pattern } = actionOf(input);
    return { action, p: parsePattern(pattern) };
  });
  const rules: RuleReport[] = parsed.map(({ action, p }, i) => {
    if (p.kind === 'invalid') return { rule: i + 1, action, pattern: p.pattern, valid: false, reason: p.reason };
    const report: RuleReport = { rule: i + 1, action, kind: p.kind, pattern: p.pattern };
    const by = parsed.findIndex((earlier, j) => j < i && covers(earlier.p, p, set));
    if (by >= 0) report.coveredBy = by + 1;
    return report;
  });
  const normalised: Rule[] = parsed.map(({ action, p }) => ({ action, pattern: p.pattern }));
  const fixed: RuleInput[] = normalised.map(({ action, pattern }) => ({ [action]: pattern }));
  const invalidPatterns = rules.filter((r) => r.valid === false).map((r) => ({ rule: r.rule, pattern: r.pattern }));
  const compiled = invalidPatterns.length === 0 ? compileRules(normalised, seeds) : null;
  const seedReports: SeedReport[] = seeds.map((url) => {
    const key = urlKey(url);
    if (key === null) return { url, valid: false };
    const report: SeedReport = { url, valid: true, site: key.site };
    // Where a seed lands is only said of a list that could run.
    if (compiled !== null) report.followed = compiled.decideKey(key).action === 'follow';
    return report;
  });
  return {
    seeds: seedReports,
    rules,
    fixed,
    normalised,
    invalidSeeds: seedReports.filter((s) => !s.valid).map((s) => s.url),
    invalidPatterns,
    covered: rules.filter((r) => r.coveredBy !== undefined).map((r) => ({ rule: r.rule, coveredBy: r.coveredBy! })),
    unfollowedSeeds: seedReports.filter((s) => s.followed === false).map((s) => s.url),
  };
}

export type CheckResult = { ok: true; rules: Rule[]; fixed: RuleInput[] } | { ok: false; body: { error: string; [k: string]: unknown } };

/**
 * Validates seeds + rules exactly as POST /api/crawls must, before any crawl starts. The first
 * problem found decides the 400 body, in this order: the rules' shape ('invalid rules'),
 * 'invalid seeds', 'invalid rule patterns', 'rules that can never match', 'seeds the rules do not
 * follow'. Omitted rules mean DEFAULT_RULES.
 */
export function checkCrawlRules(seeds: string[], rules: RuleInput[] | undefined): CheckResult {
  const inputs = rules ?? DEFAULT_RULES;
  const shape = ruleShapeProblems(inputs);
  if (shape.length > 0) return { ok: false, body: { error: 'invalid rules', rules: shape } };
  if (!Array.isArray(seeds) || seeds.length === 0) return { ok: false, body: { error: 'invalid seeds', seeds: [] } };
  const a = analyse(seeds, inputs);
  if (a.invalidSeeds.length > 0) return { ok: false, body: { error: 'invalid seeds', seeds: a.invalidSeeds } };
  if (a.invalidPatterns.length > 0) return { ok: false, body: { error: 'invalid rule patterns', rules: a.invalidPatterns } };
  if (a.covered.length > 0) return { ok: false, body: { error: 'rules that can never match', rules: a.covered } };
  if (a.unfollowedSeeds.length > 0) return { ok: false, body: { error: 'seeds the rules do not follow', seeds: a.unfollowedSeeds } };
  return { ok: true, rules: a.normalised, fixed: a.fixed };
}

export interface CrawlRulesReport {
  seeds: SeedReport[];
  rules: RuleReport[];
  ok: boolean;
}

/**
 * The /api/crawl-rules/check report: every seed and every rule, with what is wrong. ok is exactly
 * checkCrawlRules(...).ok. Throws InvalidInputError('invalid rules') when the rules' shape is wrong
 * (the route's schema normally refuses that first).
 */
export function explainCrawlRules(seeds: string[], rules: RuleInput[] | undefined): CrawlRulesReport {
  const inputs = rules ?? DEFAULT_RULES;
  const shape = ruleShapeProblems(inputs);
  if (shape.length > 0) throw new InvalidInputError('invalid rules', { rules: shape });
  const a = analyse(seeds, inputs);
  const ok = seeds.length > 0 && a.invalidSeeds.length === 0 && a.invalidPatterns.length === 0 && a.covered.length === 0 && a.unfollowedSeeds.length === 0;
  return { seeds: a.seeds, rules: a.rules, ok };
}

/** Reads rules back as fixed on a crawl row (jsonb) into Rule[]; throws on anything not in that form. */
export function rulesFromFixed(fixed: unknown): Rule[] {
  const shape = ruleShapeProblems(fixed);
  if (shape.length > 0) throw new Error(`crawl rules are not in their fixed form: ${JSON.stringify(shape)}`);
  return (fixed as RuleInput[]).map(actionOf);
}

/** Whether `earlier` is claimed to match every URL `later` would, given these seeds. */
export function coversRule(earlier: Rule, later: Rule, seeds: readonly string[]): boolean {
  return covers(parsePattern(earlier.pattern), parsePattern(later.pattern), seedSet(seeds));
}

/** Whether one rule's pattern matches a URL (whatever its position in a list). */
export function ruleMatches(rule: Rule, seeds: readonly string[], url: string): boolean {
  const key = urlKey(url);
  return key !== null && patternMatches(parsePattern(rule.pattern), key, seedSet(seeds));
}

/** For tests and tools: a pattern's kind and normalised form. */
export function describePattern(pattern: string): { kind: PatternKind | 'invalid'; pattern: string; reason?: string } {
  const p = parsePattern(pattern);
  return p.kind === 'invalid' ? { kind: 'invalid', pattern: p.pattern, reason: p.reason } : { kind: p.kind, pattern: p.pattern };
}
