import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compilePattern, matchesPattern, stepBudget, subject } from './robots-match.ts';
import { decidePath, parseRobotsTxt, groupFor, type RobotsDecision } from './robots-parse.ts';
import { MATCH_STEP_BUDGET, robotsFrom } from './robots.ts';

/** RFC 9309 2.2.3 read literally: `*` any run of characters, a final `$` the end, from the start. */
function referenceMatch(pattern: string, path: string): boolean {
  const anchored = pattern.endsWith('$');
  const body = (anchored ? pattern.slice(0, -1) : pattern).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[\\s\\S]*');
  return new RegExp(`^${body}${anchored ? '$' : ''}`).test(path);
}

/** The longest matching pattern decides, Allow on a tie; nothing matching allows. */
function referenceDecision(rules: { pattern: string; allow: boolean }[], path: string): RobotsDecision {
  let best: { pattern: string; allow: boolean } | undefined;
  for (const r of rules) {
    if (!referenceMatch(r.pattern, path)) continue;
    if (best === undefined || r.pattern.length > best.pattern.length || (r.pattern.length === best.pattern.length && r.allow && !best.allow)) best = r;
  }
  return best === undefined || best.allow ? 'allowed' : 'disallowed';
}

const pattern = fc.stringMatching(/^\/[ab*$/]{0,8}$/);
const path = fc.stringMatching(/^\/[ab/]{0,12}$/);
const unlimited = () => stepBudget(Number.MAX_SAFE_INTEGER);

describe('matchesPattern', () => {
  it('agrees with the literal reading of RFC 9309 on small inputs', () => {
    fc.assert(
      fc.property(pattern, path, (p, s) => matchesPattern(compilePattern(p), subject(s), unlimited()) === referenceMatch(p, s)),
      { numRuns: 5000 },
    );
  });
  it('takes at most twice the path plus the pattern in steps, whatever the two are', () => {
    const long = fc.stringMatching(/^\/[ab*]{0,60}\$?$/);
    const longPath = fc.stringMatching(/^\/[ab]{0,300}$/);
    fc.assert(
      fc.property(long, longPath, (p, s) => {
        const budget = unlimited();
        matchesPattern(compilePattern(p), subject(s), budget);
        expect(budget.spent).toBeLessThanOrEqual(2 * s.length + p.length + 1);
      }),
    );
  });
  it('honours * and a final $; a $ elsewhere is a character', () => {
    const m = (p: string, s: string) => matchesPattern(compilePattern(p), subject(s), unlimited());
    expect(m('/*.php$', '/index.php')).toBe(true);
    expect(m('/*.php$', '/index.php?x=1')).toBe(false);
    expect(m('/fish*', '/fish.html')).toBe(true);
    expect(m('/fish', '/Fish')).toBe(false);
    expect(m('/a$b', '/a$b')).toBe(true);
    expect(m('/a$b', '/a')).toBe(false);
    expect(m('/$', '/')).toBe(true);
    expect(m('/$', '/x')).toBe(false);
  });
});

describe('decidePath', () => {
  const rules = fc.array(fc.record({ pattern, allow: fc.boolean() }), { maxLength: 6 });
  it('picks as RFC 9309 does: the longest match wins, Allow on a tie, no match allows', () => {
    fc.assert(
      fc.property(rules, path, (rs, s) => {
        const body = `User-agent: *\n${rs.map((r) => `${r.allow ? 'Allow' : 'Disallow'}: ${r.pattern}`).join('\n')}\n`;
        expect(decidePath(groupFor(parseRobotsTxt(body), 'x'), s, unlimited())).toBe(referenceDecision(rs, s));
      }),
      { numRuns: 3000 },
    );
  });

  it('the issue’s robots.txt (1,239 rules `/*a*a…*b`, an 8,000-character path) is decided in few steps', () => {
    const body = `User-agent: *\n${Array.from({ length: 1239 }, (_, i) => `Disallow: /${'*a'.repeat(200)}*b${i}`).join('\n')}\n`;
    const group = groupFor(parseRobotsTxt(body), 'x');
    const budget = unlimited();
    expect(decidePath(group, `/${'a'.repeat(7999)}`, budget)).toBe('allowed');
    // each rule compiled once and none scanned: no rule can match a path without "b"
    expect(budget.spent).toBeLessThanOrEqual(body.length);
    const again = unlimited();
    expect(decidePath(group, `/${'a'.repeat(7999)}`, again)).toBe('allowed');
    expect(again.spent).toBeLessThanOrEqual(1239 * 2);
  });

  it('the same rules made to scan: each costs at most twice the path, and the budget cuts them off', () => {
    const body = `User-agent: *\n${Array.from({ length: 1239 }, (_, i) => `Disallow: /${'*a'.repeat(200)}*${'a'.repeat(1 + (i % 5))}b`).join('\n')}\n`;
    const group = groupFor(parseRobotsTxt(body), 'x');
    const hostile = `/${'b'.repeat(4000)}${'a'.repeat(4000)}`;
    const all = unlimited();
    expect(decidePath(group, hostile, all)).toBe('allowed');
    expect(all.spent).toBeLessThanOrEqual(1239 * (2 * hostile.length + 600));
    expect(all.spent).toBeGreaterThan(MATCH_STEP_BUDGET);
    const budget = stepBudget(MATCH_STEP_BUDGET);
    expect(decidePath(group, hostile, budget)).toBe('over-budget');
    expect(budget.spent).toBeLessThanOrEqual(MATCH_STEP_BUDGET + 1);
    // a decision the budget cuts off is "disallowed"
    expect(robotsFrom({ kind: 'ok', body }, 'http://h.test/').isAllowed(`http://h.test${hostile}`)).toBe(false);
  });
});

describe('parseRobotsTxt', () => {
  it('merges groups of one agent, prefers the agent’s own group to *, and ignores versions and case', () => {
    const g = parseRobotsTxt(
      'User-agent: *\nDisallow: /\n\nUser-agent: Capture-Ledger-Flow/2.0\nUser-agent: other\nDisallow: /x\nCrawl-delay: 2\n\nuser-agent: capture-ledger-flow\nallow: /x/y\n',
    );
    const own = groupFor(g, 'capture-ledger-flow');
    expect(own?.rules.map((r) => [r.pattern, r.allow])).toEqual([
      ['/x/y', true],
      ['/x', false],
    ]);
    expect(own?.crawlDelaySeconds).toBe(2);
    expect(groupFor(g, 'someone')?.rules.map((r) => r.pattern)).toEqual(['/']);
  });
  it('compares percent-escapes in upper case and encodes what robots.txt leaves raw', () => {
    const r = robotsFrom({ kind: 'ok', body: 'User-agent: *\nDisallow: /caf%c3%a9\nDisallow: /naïve\n' }, 'http://h.test/');
    expect(r.isAllowed('http://h.test/caf%C3%A9')).toBe(false);
    expect(r.isAllowed('http://h.test/café')).toBe(false);
    expect(r.isAllowed('http://h.test/na%c3%afve')).toBe(false);
    expect(r.isAllowed('http://h.test/cafe')).toBe(true);
  });
});
