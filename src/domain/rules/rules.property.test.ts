// Universal claims about the rules, checked over generated rule lists, seeds and URLs.
import fc from 'fast-check';
import { getDomain } from 'tldts';
import { describe, expect, it } from 'vitest';
import { checkCrawlRules, coversRule, decide, describePattern, explainCrawlRules, ruleMatches, type Rule, type RuleAction, type RuleInput } from './index.ts';

// Host names built from labels that collide on purpose: shared suffixes, label-boundary traps
// (ads / badads), public suffixes from both sections (co.uk, github.io, s3.amazonaws.com), IDNs.
const LABELS = [
  'a',
  'ads',
  'badads',
  'www',
  'example',
  'com',
  'co',
  'uk',
  'github',
  'io',
  's3',
  'amazonaws',
  'xn--bcher-kva',
  'de',
  'localhost',
  'x_y',
  'ck',
  'www',
];
const label = fc.constantFrom(...LABELS);
const domainName = fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join('.'));
const ipHost = fc.constantFrom('127.0.0.1', '10.0.0.1', '[::1]', '[2001:db8::1]');
const hostName = fc.oneof({ weight: 5, arbitrary: domainName }, { weight: 1, arbitrary: ipHost });

const scheme = fc.constantFrom('http', 'https');
const port = fc.constantFrom('', '', '', ':80', ':443', ':8080');
const pathPart = fc.constantFrom('/', '/a', '/ab', '/a/b', '/search', '/searching', '/Search', '/a/../b', '/%7Ex');
const query = fc.constantFrom('', '', '?', '?q=1', '?b=2&a=1');
const fragment = fc.constantFrom('', '', '#', '#top');
const userinfo = fc.constantFrom('', '', '', 'u@', 'u:p@');
const hostSpelling = fc
  .tuple(hostName, fc.constantFrom('plain', 'plain', 'upper', 'dot'))
  .map(([h, how]) => (how === 'upper' && !h.startsWith('[') ? h.toUpperCase() : how === 'dot' && !h.startsWith('[') ? h + '.' : h));

/** http(s) URLs in all the spellings links come in. */
const httpUrl = fc
  .tuple(scheme, userinfo, hostSpelling, port, pathPart, query, fragment)
  .map(([s, u, h, p, path, q, f]) => `${s}://${u}${h}${p}${path}${q}${f}`);
/** Anything at all: other schemes, relative references, garbage. */
const anyString = fc.oneof(
  httpUrl,
  fc.string(),
  fc.constantFrom('ftp://example.com/', 'mailto:a@example.com', 'javascript:void(0)', '/relative', '//example.com/x', 'https://', 'http://[::1', ''),
);
const seedUrl = fc.tuple(scheme, hostName, port, pathPart).map(([s, h, p, path]) => `${s}://${h}${p}${path}`);
const seedList = fc.array(seedUrl, { minLength: 1, maxLength: 3 });

const scopePattern = fc.constantFrom('same-origin', 'same-host', 'same-site', 'any');
/** URL prefixes: a generated URL cut anywhere after its authority (so prefixes of each other occur). */
const prefixPattern = fc.tuple(scheme, hostName, port, pathPart, query, fc.nat(12)).map(([s, h, p, path, q, cut]) => {
  const full = `${s}://${h}${p}${path}${q}`;
  const min = `${s}://${h}${p}`.length;
  return full.slice(0, Math.min(full.length, min + cut));
});
const pattern = fc.oneof(
  { weight: 2, arbitrary: scopePattern },
  { weight: 3, arbitrary: domainName },
  { weight: 1, arbitrary: ipHost },
  { weight: 3, arbitrary: prefixPattern },
);
const action = fc.constantFrom<RuleAction>('follow', 'capture', 'skip');
const rule = fc.tuple(action, pattern).map(([a, p]): Rule => ({ action: a, pattern: p }));
const ruleList = fc.array(rule, { minLength: 1, maxLength: 8 });

/** The rules as validation fixes them (URL prefixes normalised), dropping invalid ones. */
function fixedValid(rules: Rule[]): Rule[] {
  return rules.flatMap((r) => {
    const d = describePattern(r.pattern);
    return d.kind === 'invalid' ? [] : [{ action: r.action, pattern: d.pattern }];
  });
}

// ---- An independent oracle: the spec's words, written out a second time, naively. ----
function oracleHost(u: URL): string {
  return u.hostname.replace(/(.)\.+$/, '$1');
}
function oracleSite(hostname: string): string {
  if (hostname.startsWith('[') || /^\d+\.\d+\.\d+\.\d+$/.test(hostname)) return hostname;
  return getDomain(hostname, { allowPrivateDomains: true, extractHostname: false, validateHostname: false, detectIp: false }) ?? hostname;
}
function oracleMatches(r: Rule, seeds: string[], url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  const host = oracleHost(u);
  const hostPort = host + (u.port ? `:${u.port}` : '');
  const seedUrls = seeds.flatMap((s) => {
    try {
      const su = new URL(s);
      return su.protocol === 'http:' || su.protocol === 'https:' ? [su] : [];
    } catch {
      return [];
    }
  });
  switch (r.pattern) {
    case 'any':
      return true;
    case 'same-origin':
      return seedUrls.some((s) => s.protocol === u.protocol && oracleHost(s) === host && s.port === u.port);
    case 'same-host':
      return seedUrls.some((s) => oracleHost(s) + (s.port ? `:${s.port}` : '') === hostPort);
    case 'same-site':
      return seedUrls.some((s) => oracleSite(oracleHost(s)) === oracleSite(host));
  }
  if (/^https?:\/\//.test(r.pattern)) {
    const bare = `${u.protocol}//${hostPort}${u.pathname}${u.search || (u.href.replace(/#.*$/, '').endsWith('?') ? '?' : '')}`;
    return bare.startsWith(r.pattern);
  }
  const d = new URL(`http://${r.pattern}/`).hostname;
  return host === d || host.endsWith('.' + d);
}
function oracleDecide(rules: Rule[], seeds: string[], url: string): { rule: number; action: RuleAction } {
  const i = rules.findIndex((r) => oracleMatches(r, seeds, url));
  return i < 0 ? { rule: 0, action: 'skip' } : { rule: i + 1, action: rules[i]!.action };
}

const RUNS = { numRuns: 2000 };

describe('rules: properties', () => {
  it('coverage is sound: whatever a covered rule matches, the rule claimed to cover it matches too', () => {
    let claimed = 0;
    let exercised = 0;
    fc.assert(
      fc.property(seedList, rule, rule, fc.array(httpUrl, { minLength: 1, maxLength: 20 }), (seeds, a, b, urls) => {
        const [fa, fb] = fixedValid([a, b]);
        if (fa === undefined || fb === undefined || !coversRule(fa, fb, seeds)) return;
        claimed += 1;
        // URLs the covered rule is most likely to match: its own (for a prefix) and the seeds'
        const probes = [
          ...urls,
          ...seeds,
          ...(fb.pattern.includes('://') ? [fb.pattern, fb.pattern + 'x'] : [`https://${fb.pattern}/`, `http://x.${fb.pattern}:8080/`]),
        ];
        for (const url of probes) {
          if (!ruleMatches(fb, seeds, url)) continue;
          exercised += 1;
          expect(ruleMatches(fa, seeds, url)).toBe(true);
        }
      }),
      { numRuns: 5000 },
    );
    // not vacuous: coverage is claimed often, and on URLs the covered rule matches
    expect(claimed).toBeGreaterThan(150);
    expect(exercised).toBeGreaterThan(300);
  }, 60_000);

  it('no rule reported as covered ever decides a URL', () => {
    fc.assert(
      fc.property(seedList, ruleList, fc.array(httpUrl, { minLength: 1, maxLength: 20 }), (seeds, rules, urls) => {
        const fixed = fixedValid(rules);
        const inputs: RuleInput[] = fixed.map((r) => ({ [r.action]: r.pattern }));
        if (inputs.length === 0) return;
        const covered = new Set(
          explainCrawlRules(seeds, inputs)
            .rules.filter((r) => r.coveredBy !== undefined)
            .map((r) => r.rule),
        );
        for (const url of urls) expect(covered.has(decide(fixed, seeds, url).rule)).toBe(false);
        // ...and removing them changes no decision (first match found elsewhere)
        const kept = fixed.filter((_, i) => !covered.has(i + 1));
        for (const url of urls) expect(decide(kept, seeds, url).action).toBe(decide(fixed, seeds, url).action);
      }),
      RUNS,
    );
  }, 60_000);

  it('decide is first-match, agreeing with an independent reading of the spec', () => {
    fc.assert(
      fc.property(seedList, ruleList, fc.array(httpUrl, { minLength: 1, maxLength: 20 }), (seeds, rules, urls) => {
        const fixed = fixedValid(rules);
        for (const url of urls) expect(decide(fixed, seeds, url)).toEqual(oracleDecide(fixed, seeds, url));
      }),
      RUNS,
    );
  }, 60_000);

  it('every list the validator accepts behaves as first-match, follows every seed and has no dead rule', () => {
    // Lists built to be accepted often: some rules, then a follow rule that takes the seeds, then more.
    const acceptedLike = fc
      .tuple(seedList, fc.array(rule, { maxLength: 4 }), fc.constantFrom('same-origin', 'same-host', 'same-site', 'any'), fc.array(rule, { maxLength: 4 }))
      .map(([seeds, before, scope, after]) => ({
        seeds,
        inputs: [...before, { action: 'follow' as const, pattern: scope }, ...after].map((r): RuleInput => ({ [r.action]: r.pattern })),
      }));
    let accepted = 0;
    fc.assert(
      fc.property(acceptedLike, fc.array(httpUrl, { minLength: 1, maxLength: 20 }), ({ seeds, inputs }, urls) => {
        const res = checkCrawlRules(seeds, inputs);
        expect(explainCrawlRules(seeds, inputs).ok).toBe(res.ok);
        if (!res.ok) return;
        accepted += 1;
        for (const s of seeds) expect(decide(res.rules, seeds, s).action).toBe('follow');
        for (const url of urls) expect(decide(res.rules, seeds, url)).toEqual(oracleDecide(res.rules, seeds, url));
        // every rule of an accepted list is live as far as the spec's relations can tell
        for (let j = 0; j < res.rules.length; j += 1) {
          for (let i = 0; i < j; i += 1) expect(coversRule(res.rules[i]!, res.rules[j]!, seeds)).toBe(false);
        }
      }),
      RUNS,
    );
    expect(accepted).toBeGreaterThan(RUNS.numRuns / 10);
  }, 60_000);

  it('decide is total: any string, any list, an answer in range and consistent with the rule it names', () => {
    fc.assert(
      fc.property(
        fc.array(anyString, { maxLength: 3 }),
        fc.array(fc.tuple(action, fc.oneof(pattern, fc.string())), { maxLength: 8 }),
        anyString,
        (seeds, pairs, url) => {
          const rules = pairs.map(([a, p]) => ({ action: a, pattern: p }));
          const d = decide(rules, seeds, url);
          expect(Number.isInteger(d.rule)).toBe(true);
          expect(d.rule).toBeGreaterThanOrEqual(0);
          expect(d.rule).toBeLessThanOrEqual(rules.length);
          expect(d.action).toBe(d.rule === 0 ? 'skip' : rules[d.rule - 1]!.action);
        },
      ),
      RUNS,
    );
  }, 60_000);

  it('normalising a pattern is idempotent and never changes its kind', () => {
    fc.assert(
      fc.property(fc.oneof(pattern, fc.string(), httpUrl), (p) => {
        const once = describePattern(p);
        if (once.kind === 'invalid') return;
        expect(describePattern(once.pattern)).toEqual(once);
      }),
      RUNS,
    );
  }, 60_000);
});
