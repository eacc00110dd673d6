import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../invalid-input.ts';
import {
  DEFAULT_RULES,
  RULES_JSON_SCHEMA,
  checkCrawlRules,
  coversRule,
  decide,
  describePattern,
  explainCrawlRules,
  parseRuleParam,
  ruleShapeProblems,
  rulesFromFixed,
  type Rule,
  type RuleInput,
} from './index.ts';
import { hasSuffixRulesBelow, siteOf } from './psl.ts';
import { urlKey } from './url-key.ts';

const r = (action: Rule['action'], pattern: string): Rule => ({ action, pattern });
const long = (n: number) => 'https://www.example.com/' + 'a'.repeat(n - 'https://www.example.com/'.length);

describe('patterns: kind and normalised form', () => {
  it.each([
    // scopes
    ['same-origin', 'scope', 'same-origin'],
    ['same-host', 'scope', 'same-host'],
    ['same-site', 'scope', 'same-site'],
    ['any', 'scope', 'any'],
    // host names: stored as read
    ['ads.example.com', 'domain', 'ads.example.com'],
    ['localhost', 'domain', 'localhost'],
    ['a_b.example.com', 'domain', 'a_b.example.com'],
    ['xn--bcher-kva.de', 'domain', 'xn--bcher-kva.de'],
    ['bücher.de', 'domain', 'bücher.de'],
    ['127.0.0.1', 'domain', '127.0.0.1'],
    ['[::1]', 'domain', '[::1]'],
    ['[2001:db8::1]', 'domain', '[2001:db8::1]'],
    // URL prefixes: normalised
    ['https://www.example.com/search', 'prefix', 'https://www.example.com/search'],
    ['https://WWW.Example.COM/Search', 'prefix', 'https://www.example.com/Search'],
    ['HTTPS://www.example.com/', 'prefix', 'https://www.example.com/'],
    ['https://www.example.com', 'prefix', 'https://www.example.com/'],
    ['https://www.example.com:443/a', 'prefix', 'https://www.example.com/a'],
    ['http://www.example.com:80/a', 'prefix', 'http://www.example.com/a'],
    ['http://www.example.com:443/a', 'prefix', 'http://www.example.com:443/a'],
    ['https://www.example.com:8443/a', 'prefix', 'https://www.example.com:8443/a'],
    ['https://www.example.com./a', 'prefix', 'https://www.example.com/a'],
    ['https://bücher.de/x', 'prefix', 'https://xn--bcher-kva.de/x'],
    ['https://[::1]:8443/a', 'prefix', 'https://[::1]:8443/a'],
    ['https://[0:0::1]/a', 'prefix', 'https://[::1]/a'],
    ['https://x.com/search?', 'prefix', 'https://x.com/search?'],
    ['https://x.com/a b', 'prefix', 'https://x.com/a%20b'],
    ['https://x.com/a/../b', 'prefix', 'https://x.com/b'],
  ])('%j is a %s pattern, fixed as %j', (input, kind, pattern) => {
    expect(describePattern(input)).toEqual({ kind, pattern });
  });

  it.each([
    ['', 'empty'],
    ['Same-Site', 'scopes are written in lower case'],
    ['ANY', 'scopes are written in lower case'],
    ['Ads.Example.com', 'host names must be lower-case'],
    ['EXAMPLE.COM', 'host names must be lower-case'],
    ['BÜCHER.de', 'host names must be lower-case'],
    ['ｅxample.com', 'did you mean example.com'],
    ['*.example.com', 'not a host name'],
    ['example.com.', 'empty labels'],
    ['.example.com', 'empty labels'],
    ['a..example.com', 'empty labels'],
    ['example.com:8080', 'no port'],
    ['example.com/path', 'no port, path'],
    ['user@example.com', 'userinfo'],
    [' example.com', 'whitespace'],
    ['example.com\n', 'whitespace'],
    ['exa\u0001mple.com', 'control'],
    ['010.0.0.1', 'an IP address is written as 8.0.0.1'],
    ['[0::1]', 'an IP address is written as [::1]'],
    ['::1', 'not a host name'],
    ['foo.123', 'not a host name'],
    ['xn--zz.de', 'not a host name'],
    ['https://', 'not a URL'],
    ['https://exa mple.com/', 'not a URL'],
    ['https://user:pw@www.example.com/', 'userinfo'],
    ['https://user@www.example.com/', 'userinfo'],
    ['https://www.example.com/#top', 'fragment'],
    ['https://www.example.com/a#', 'fragment'],
    ['ftp://www.example.com/', 'only http and https'],
    ['ws://www.example.com/', 'only http and https'],
    ['mailto:someone@example.com', 'a host name has no'],
    ['javascript:alert(1)', 'not a host name'],
  ])('%j is an invalid pattern (%s)', (input, reason) => {
    const d = describePattern(input);
    expect(d.kind).toBe('invalid');
    expect(d.pattern).toBe(input);
    expect(d.reason).toContain(reason);
  });
});

describe('decide', () => {
  const seeds = ['https://www.example.com/'];

  it('first match wins, rules numbered from 1, no match is rule 0 skip', () => {
    const rules = [r('skip', 'ads.example.com'), r('skip', 'https://www.example.com/search'), r('follow', 'same-site'), r('capture', 'any')];
    expect(decide(rules, seeds, 'https://ads.example.com/x')).toEqual({ rule: 1, action: 'skip' });
    expect(decide(rules, seeds, 'https://www.example.com/searching?q=1')).toEqual({ rule: 2, action: 'skip' });
    expect(decide(rules, seeds, 'https://www.example.com/about')).toEqual({ rule: 3, action: 'follow' });
    expect(decide(rules, seeds, 'https://blog.example.com/')).toEqual({ rule: 3, action: 'follow' });
    expect(decide(rules, seeds, 'https://other.org/')).toEqual({ rule: 4, action: 'capture' });
    expect(decide([r('follow', 'same-origin')], seeds, 'https://other.org/')).toEqual({ rule: 0, action: 'skip' });
  });

  it('the default rules follow the seeds\u2019 origin and nothing else', () => {
    const rules = rulesFromFixed(DEFAULT_RULES);
    expect(decide(rules, seeds, 'https://www.example.com/a')).toEqual({ rule: 1, action: 'follow' });
    expect(decide(rules, seeds, 'http://www.example.com/a')).toEqual({ rule: 0, action: 'skip' });
    expect(decide(rules, seeds, 'https://www.example.com:8443/a')).toEqual({ rule: 0, action: 'skip' });
    expect(decide(rules, seeds, 'https://blog.example.com/')).toEqual({ rule: 0, action: 'skip' });
  });

  it.each([
    // [pattern, url, matches]
    ['ads.example.com', 'https://ads.example.com/', true],
    ['ads.example.com', 'https://x.ads.example.com/', true],
    ['ads.example.com', 'https://a.b.ads.example.com:8080/', true],
    ['ads.example.com', 'https://badads.example.com/', false],
    ['ads.example.com', 'https://ads.example.com.evil.net/', false],
    ['ads.example.com', 'https://ADS.Example.COM/', true],
    ['ads.example.com', 'https://ads.example.com./', true],
    ['ads.example.com', 'https://user:pw@ads.example.com/', true],
    ['ads.example.com', 'http://ads.example.com:443/', true],
    ['bücher.de', 'https://xn--bcher-kva.de/', true],
    ['bücher.de', 'https://shop.bücher.de/', true],
    ['xn--bcher-kva.de', 'https://bücher.de/', true],
    ['127.0.0.1', 'http://127.0.0.1:8080/', true],
    ['127.0.0.1', 'http://0x7f.0.0.1/', true],
    ['0.0.1', 'http://127.0.0.1/', false],
    ['[::1]', 'http://[::1]:8080/', true],
    ['[::1]', 'http://[0:0:0:0:0:0:0:1]/', true],
    ['https://www.example.com/search', 'https://www.example.com/search', true],
    ['https://www.example.com/search', 'https://www.example.com/searching', true],
    ['https://www.example.com/search', 'https://www.example.com/search?q=1', true],
    ['https://www.example.com/search', 'https://www.example.com/Search', false],
    ['https://www.example.com/search/', 'https://www.example.com/searching', false],
    ['https://www.example.com/search', 'http://www.example.com/search', false],
    ['https://www.example.com/search', 'https://WWW.EXAMPLE.COM/search', true],
    ['https://www.example.com/search', 'https://www.example.com:443/search', true],
    ['https://www.example.com/search', 'https://www.example.com:8443/search', false],
    ['https://www.example.com/search', 'https://user@www.example.com/search', true],
    ['https://www.example.com/search', 'https://www.example.com./search', true],
    ['https://www.example.com/search', 'https://www.example.com/search#results', true],
    ['https://www.example.com', 'https://www.example.com.evil.net/', false],
    ['https://www.example.com', 'https://www.example.com/x', true],
    ['http://www.example.com:8080/', 'http://www.example.com:8080/a', true],
    ['http://www.example.com:8080/', 'http://www.example.com/a', false],
    ['any', 'http://anything.invalid/', true],
    ['any', 'ftp://www.example.com/', false],
    ['any', 'not a url', false],
    ['any', '/relative', false],
    ['any', 'javascript:alert(1)', false],
  ])('skip %j against %j → %s', (pattern, url, matches) => {
    expect(decide([r('skip', pattern)], ['https://www.example.com/'], url)).toEqual(matches ? { rule: 1, action: 'skip' } : { rule: 0, action: 'skip' });
  });

  it.each([
    // [scope, seed, url, matches]
    ['same-origin', 'https://www.example.com/', 'https://www.example.com/a', true],
    ['same-origin', 'https://www.example.com/', 'https://www.example.com:443/a', true],
    ['same-origin', 'https://www.example.com/', 'http://www.example.com/a', false],
    ['same-origin', 'https://www.example.com/', 'https://www.example.com:8443/a', false],
    ['same-origin', 'https://www.example.com/', 'https://u:p@www.example.com/', true],
    ['same-origin', 'https://www.example.com./', 'https://www.example.com/', true],
    ['same-host', 'https://www.example.com/', 'http://www.example.com/a', true],
    ['same-host', 'https://www.example.com/', 'http://www.example.com:443/a', false],
    ['same-host', 'http://www.example.com:8080/', 'https://www.example.com:8080/', true],
    ['same-host', 'http://www.example.com:8080/', 'http://www.example.com/', false],
    ['same-host', 'https://www.example.com/', 'https://example.com/', false],
    ['same-site', 'https://www.example.com/', 'http://blog.example.com:8080/', true],
    ['same-site', 'https://www.example.com/', 'https://example.com/', true],
    ['same-site', 'https://www.example.com/', 'https://example.org/', false],
    ['same-site', 'https://foo.github.io/', 'https://bar.github.io/', false],
    ['same-site', 'https://foo.github.io/', 'https://x.foo.github.io/', true],
    ['same-site', 'https://www.example.co.uk/', 'https://other.co.uk/', false],
    ['same-site', 'http://localhost:8080/', 'http://localhost:9090/', true],
    ['same-site', 'http://localhost:8080/', 'http://127.0.0.1:8080/', false],
    ['same-site', 'http://127.0.0.1/', 'http://127.0.0.1:9/', true],
    ['same-site', 'http://127.0.0.1/', 'http://127.0.0.2/', false],
    ['same-site', 'http://[::1]/', 'http://[::1]:8080/', true],
    ['same-site', 'https://bücher.de/', 'https://shop.xn--bcher-kva.de/', true],
  ])('%s with seed %j against %j → %s', (scope, seed, url, matches) => {
    expect(decide([r('follow', scope)], [seed], url).rule).toBe(matches ? 1 : 0);
  });

  it('scopes compare with every seed', () => {
    const seeds2 = ['https://a.example.com/', 'https://b.example.org/'];
    expect(decide([r('follow', 'same-host')], seeds2, 'https://b.example.org/x').rule).toBe(1);
    expect(decide([r('follow', 'same-site')], seeds2, 'https://c.example.org/').rule).toBe(1);
    expect(decide([r('follow', 'same-site')], seeds2, 'https://c.example.net/').rule).toBe(0);
  });

  it('invalid seeds are ignored by scopes; invalid rule patterns never match', () => {
    expect(decide([r('follow', 'same-origin')], ['not a url', 'https://a.com/'], 'https://a.com/x').rule).toBe(1);
    expect(decide([r('follow', 'Not.Valid'), r('follow', 'any')], [], 'https://a.com/').rule).toBe(2);
  });
});

describe('public suffix list: sites', () => {
  it.each([
    ['www.example.com', 'example.com'],
    ['foo.github.io', 'foo.github.io'],
    ['github.io', 'github.io'],
    ['a.b.example.co.uk', 'example.co.uk'],
    ['localhost', 'localhost'],
    ['127.0.0.1', '127.0.0.1'],
    ['[::1]', '[::1]'],
    ['x..example.com', 'example.com'],
    ['bucket.s3.amazonaws.com', 'bucket.s3.amazonaws.com'],
  ])('site of %s is %s', (host, site) => {
    expect(siteOf(host)).toBe(site);
  });

  it.each([
    ['example.com', false],
    ['www.example.com', false],
    ['amazonaws.com', true],
    ['com', true],
    ['co.uk', true],
    ['example.co.uk', false],
    ['foo.github.io', false],
  ])('list entries below %s: %s', (host, below) => {
    expect(hasSuffixRulesBelow(host)).toBe(below);
  });

  it('url keys ignore userinfo, fragment and trailing host dots', () => {
    expect(urlKey('https://u:p@WWW.Example.com.:443/a?b#c')).toEqual({
      protocol: 'https:',
      hostname: 'www.example.com',
      port: '',
      host: 'www.example.com',
      origin: 'https://www.example.com',
      site: 'example.com',
      href: 'https://www.example.com/a?b',
    });
    expect(urlKey('http://[::1]:8080/')?.host).toBe('[::1]:8080');
    expect(urlKey('mailto:a@b.c')).toBeNull();
    expect(urlKey('')).toBeNull();
  });
});

describe('coverage ("rules that can never match")', () => {
  const seeds = ['https://www.example.com/'];
  it.each([
    // [earlier, later, covered]
    ['any', 'any', true],
    ['any', 'same-origin', true],
    ['any', 'evil.com', true],
    ['any', 'https://evil.com/x', true],
    ['same-site', 'same-site', true],
    ['same-site', 'same-host', true],
    ['same-site', 'same-origin', true],
    ['same-host', 'same-origin', true],
    ['same-host', 'same-host', true],
    ['same-origin', 'same-origin', true],
    ['same-origin', 'same-host', false],
    ['same-host', 'same-site', false],
    ['same-site', 'any', false],
    ['same-origin', 'any', false],
    // a domain covers itself and its subdomains
    ['example.com', 'example.com', true],
    ['example.com', 'ads.example.com', true],
    ['example.com', 'x.ads.example.com', true],
    ['ads.example.com', 'example.com', false],
    ['ads.example.com', 'badads.example.com', false],
    ['example.com', 'example.com.au', false],
    ['bücher.de', 'xn--bcher-kva.de', true],
    ['xn--bcher-kva.de', 'shop.bücher.de', true],
    // same-site covers a domain on a seed's site
    ['same-site', 'ads.example.com', true],
    ['same-site', 'example.com', true],
    ['same-site', 'example.org', false],
    ['same-host', 'www.example.com', false],
    ['same-origin', 'www.example.com', false],
    // a domain never covers a scope (not one of the relations)
    ['example.com', 'same-origin', false],
    // a URL prefix: by a shorter (or equal) prefix
    ['https://www.example.com/a', 'https://www.example.com/ab', true],
    ['https://www.example.com/a', 'https://www.example.com/a', true],
    ['https://www.example.com/ab', 'https://www.example.com/a', false],
    ['https://www.example.com/a', 'http://www.example.com/a', false],
    ['https://www.example.com', 'https://WWW.example.com:443/x', true],
    // ...or by a scope or domain its own URL falls in
    ['same-origin', 'https://www.example.com/x', true],
    ['same-origin', 'http://www.example.com/x', false],
    ['same-host', 'http://www.example.com/x', true],
    ['same-host', 'https://www.example.com:8443/x', false],
    ['same-site', 'https://blog.example.com:8443/x', true],
    ['same-site', 'https://example.org/x', false],
    ['example.com', 'https://blog.example.com/x', true],
    ['example.com', 'https://blogexample.com/x', false],
    ['[::1]', 'http://[::1]:8080/', true],
    // a prefix never covers a domain or scope
    ['https://www.example.com/', 'www.example.com', false],
    ['https://www.example.com/', 'same-origin', false],
  ])('%j before %j: covered %s', (earlier, later, covered) => {
    expect(coversRule(r('skip', earlier), r('follow', later), seeds)).toBe(covered);
  });

  it('same-site covers a domain only when the Public Suffix List puts every name under it on a seed\u2019s site', () => {
    // s3.amazonaws.com is a public suffix: x.s3.amazonaws.com is not same-site with amazonaws.com
    expect(coversRule(r('follow', 'same-site'), r('skip', 'amazonaws.com'), ['https://amazonaws.com/'])).toBe(false);
    expect(decide([r('follow', 'same-site')], ['https://amazonaws.com/'], 'https://x.s3.amazonaws.com/').rule).toBe(0);
    // github.io is itself a suffix; its subdomains are sites of their own
    expect(coversRule(r('follow', 'same-site'), r('skip', 'github.io'), ['https://github.io/'])).toBe(false);
    expect(coversRule(r('follow', 'same-site'), r('skip', 'x.foo.github.io'), ['https://foo.github.io/'])).toBe(true);
    expect(coversRule(r('follow', 'same-site'), r('skip', 'bar.github.io'), ['https://foo.github.io/'])).toBe(false);
    // localhost has no registrable domain: x.localhost is a site of its own
    expect(coversRule(r('follow', 'same-site'), r('skip', 'localhost'), ['http://localhost:8080/'])).toBe(false);
    // an IP address has no subdomains: certain
    expect(coversRule(r('follow', 'same-site'), r('skip', '127.0.0.1'), ['http://127.0.0.1:8080/'])).toBe(true);
    expect(coversRule(r('follow', 'same-site'), r('skip', '127.0.0.2'), ['http://127.0.0.1:8080/'])).toBe(false);
    // any seed will do
    expect(coversRule(r('follow', 'same-site'), r('skip', 'ads.example.org'), ['https://a.com/', 'https://example.org/'])).toBe(true);
  });
});

describe('checkCrawlRules', () => {
  const seeds = ['https://www.example.com/'];

  it('accepts the spec\u2019s example and fixes the rules as read, URL prefixes normalised', () => {
    const rules: RuleInput[] = [{ skip: 'ads.example.com' }, { skip: 'HTTPS://WWW.example.com:443/search' }, { follow: 'same-site' }, { capture: 'any' }];
    expect(checkCrawlRules(seeds, rules)).toEqual({
      ok: true,
      rules: [r('skip', 'ads.example.com'), r('skip', 'https://www.example.com/search'), r('follow', 'same-site'), r('capture', 'any')],
      fixed: [{ skip: 'ads.example.com' }, { skip: 'https://www.example.com/search' }, { follow: 'same-site' }, { capture: 'any' }],
    });
  });

  it('omitted rules mean [{ follow: same-origin }]', () => {
    expect(checkCrawlRules(seeds, undefined)).toEqual({ ok: true, rules: [r('follow', 'same-origin')], fixed: [{ follow: 'same-origin' }] });
  });

  it('invalid rule patterns, named by rule number and pattern as given', () => {
    expect(checkCrawlRules(seeds, [{ follow: 'same-origin' }, { skip: 'Ads.Example.com' }, { skip: 'ftp://x.com/' }])).toEqual({
      ok: false,
      body: {
        error: 'invalid rule patterns',
        rules: [
          { rule: 2, pattern: 'Ads.Example.com' },
          { rule: 3, pattern: 'ftp://x.com/' },
        ],
      },
    });
  });

  it('rules that can never match, with the earliest earlier rule that covers each', () => {
    expect(
      checkCrawlRules(seeds, [{ follow: 'same-host' }, { follow: 'same-site' }, { skip: 'ads.example.com' }, { skip: 'https://www.example.com/x' }]),
    ).toEqual({
      ok: false,
      body: {
        error: 'rules that can never match',
        rules: [
          { rule: 3, coveredBy: 2 },
          { rule: 4, coveredBy: 1 },
        ],
      },
    });
    expect(checkCrawlRules(seeds, [{ follow: 'same-site' }, { skip: 'ads.example.com' }])).toEqual({
      ok: false,
      body: { error: 'rules that can never match', rules: [{ rule: 2, coveredBy: 1 }] },
    });
  });

  it('seeds the rules do not follow: capture, skip or no rule at all', () => {
    const two = ['https://www.example.com/', 'https://ads.example.com/', 'https://other.org/', 'https://www.example.com/pdf/x'];
    expect(checkCrawlRules(two, [{ skip: 'ads.example.com' }, { capture: 'https://www.example.com/pdf/' }, { follow: 'www.example.com' }])).toEqual({
      ok: false,
      body: { error: 'seeds the rules do not follow', seeds: ['https://ads.example.com/', 'https://other.org/', 'https://www.example.com/pdf/x'] },
    });
  });

  it('invalid seeds', () => {
    expect(checkCrawlRules(['https://www.example.com/', 'ftp://x.com/', 'not a url', '/relative'], undefined)).toEqual({
      ok: false,
      body: { error: 'invalid seeds', seeds: ['ftp://x.com/', 'not a url', '/relative'] },
    });
    expect(checkCrawlRules([], undefined)).toEqual({ ok: false, body: { error: 'invalid seeds', seeds: [] } });
  });

  it('checks in order: shape, seeds, patterns, coverage, seeds followed', () => {
    const badShape = checkCrawlRules(['nope'], [{ follow: 'x', skip: 'y' }]);
    expect(badShape.ok === false && badShape.body.error).toBe('invalid rules');
    const badSeed = checkCrawlRules(['nope'], [{ follow: 'Bad' }]);
    expect(badSeed.ok === false && badSeed.body.error).toBe('invalid seeds');
    const badPattern = checkCrawlRules(seeds, [{ follow: 'Bad' }, { follow: 'any' }, { follow: 'any' }]);
    expect(badPattern.ok === false && badPattern.body.error).toBe('invalid rule patterns');
    const covered = checkCrawlRules(seeds, [{ skip: 'any' }, { follow: 'same-origin' }]);
    expect(covered.ok === false && covered.body.error).toBe('rules that can never match');
  });

  it.each<[string, unknown, string]>([
    ['33 rules', Array.from({ length: 33 }, (_, i) => ({ skip: `h${i}.example.com` })), 'a crawl has 1 to 32 rules, not 33'],
    ['no rules', [], 'a crawl has 1 to 32 rules, not 0'],
    ['two keys', [{ follow: 'same-origin', skip: 'ads.example.com' }], 'exactly one key, not 2'],
    ['no key', [{}], 'exactly one key, not 0'],
    ['unknown action', [{ jump: 'same-origin' }], 'unknown action "jump"'],
    ['upper-case action', [{ Follow: 'same-origin' }], 'unknown action "Follow"'],
    ['empty pattern', [{ follow: '' }], '1 to 2048 characters'],
    ['2049-character pattern', [{ follow: long(2049) }], '1 to 2048 characters'],
    ['non-string pattern', [{ follow: 5 }], '1 to 2048 characters'],
    ['a string, not an object', ['same-origin'], 'an object with one key'],
    ['an array rule', [['follow', 'any']], 'an object with one key'],
    ['null', [null], 'an object with one key'],
  ])('shape: %s is refused', (_name, rules, problem) => {
    const res = checkCrawlRules(['https://www.example.com/'], rules as RuleInput[]);
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.body.error).toBe('invalid rules');
    expect(JSON.stringify(res.body.rules)).toContain(problem.replace(/"/g, '\\"'));
  });

  it('32 rules and a 2048-character pattern are within the limits', () => {
    const rules: RuleInput[] = [
      { follow: 'same-origin' },
      ...Array.from({ length: 30 }, (_, i) => ({ skip: `h${i}.example.org` })),
      { skip: long(2048).replace('www.example.com', 'x.example.net') },
    ];
    expect(rules).toHaveLength(32);
    expect(ruleShapeProblems(rules)).toEqual([]);
    expect(checkCrawlRules(seeds, rules).ok).toBe(true);
  });

  it('pattern length counts characters (code points), as the JSON schema does', () => {
    expect(ruleShapeProblems([{ skip: '\u{1F600}'.repeat(2048) }])).toEqual([]);
    expect(ruleShapeProblems([{ skip: '\u{1F600}'.repeat(2049) }])).toHaveLength(1);
    expect(parseRuleParam(`skip:${'\u{1F600}'.repeat(2048)}`)).not.toBeNull();
  });

  it('the JSON schema says the same limits', () => {
    expect(RULES_JSON_SCHEMA.minItems).toBe(1);
    expect(RULES_JSON_SCHEMA.maxItems).toBe(32);
    expect(RULES_JSON_SCHEMA.items.maxProperties).toBe(1);
    expect(RULES_JSON_SCHEMA.items.properties.follow.maxLength).toBe(2048);
    expect(RULES_JSON_SCHEMA.items.propertyNames.enum).toEqual(['follow', 'capture', 'skip']);
  });

  it('IDN seeds and patterns agree in either spelling', () => {
    expect(checkCrawlRules(['https://bücher.de/'], [{ skip: 'shop.xn--bcher-kva.de' }, { follow: 'bücher.de' }]).ok).toBe(true);
    expect(checkCrawlRules(['https://bücher.de/'], [{ skip: 'bücher.de' }, { follow: 'any' }])).toEqual({
      ok: false,
      body: { error: 'seeds the rules do not follow', seeds: ['https://bücher.de/'] },
    });
  });

  it('IPv6 seeds and userinfo on seeds', () => {
    expect(checkCrawlRules(['http://[::1]:8080/'], [{ follow: 'same-origin' }]).ok).toBe(true);
    expect(checkCrawlRules(['https://u:p@www.example.com/'], [{ follow: 'https://www.example.com/' }]).ok).toBe(true);
  });
});

describe('explainCrawlRules (GET /api/crawl-rules/check)', () => {
  it('reports the spec\u2019s example', () => {
    expect(explainCrawlRules(['https://www.example.com/'], [{ follow: 'same-site' }, { skip: 'ads.example.com' }])).toEqual({
      seeds: [{ url: 'https://www.example.com/', valid: true, site: 'example.com', followed: true }],
      rules: [
        { rule: 1, action: 'follow', kind: 'scope', pattern: 'same-site' },
        { rule: 2, action: 'skip', kind: 'domain', pattern: 'ads.example.com', coveredBy: 1 },
      ],
      ok: false,
    });
  });

  it('reports everything at once: invalid seeds, invalid patterns, coverage; followed only for a list that could run', () => {
    const report = explainCrawlRules(['https://www.example.com/', 'nope'], [{ follow: 'any' }, { skip: 'Bad.Host' }, { skip: 'x.com' }]);
    expect(report.ok).toBe(false);
    expect(report.seeds).toEqual([
      { url: 'https://www.example.com/', valid: true, site: 'example.com' },
      { url: 'nope', valid: false },
    ]);
    expect(report.rules).toEqual([
      { rule: 1, action: 'follow', kind: 'scope', pattern: 'any' },
      { rule: 2, action: 'skip', pattern: 'Bad.Host', valid: false, reason: 'host names must be lower-case' },
      { rule: 3, action: 'skip', kind: 'domain', pattern: 'x.com', coveredBy: 1 },
    ]);
  });

  it('ok exactly when checkCrawlRules accepts', () => {
    const cases: [string[], RuleInput[] | undefined][] = [
      [['https://a.com/'], undefined],
      [['https://a.com/'], [{ capture: 'same-origin' }]],
      [['https://a.com/', 'https://b.com/'], [{ follow: 'a.com' }]],
      [['https://a.com/'], [{ skip: 'https://a.com/x' }, { follow: 'a.com' }]],
    ];
    for (const [s, rules] of cases) expect(explainCrawlRules(s, rules).ok).toBe(checkCrawlRules(s, rules).ok);
  });

  it('a shape problem is a 400 (InvalidInputError), not a report', () => {
    expect(() => explainCrawlRules(['https://a.com/'], [{ follow: 'a', skip: 'b' }])).toThrow(InvalidInputError);
  });
});

describe('parseRuleParam', () => {
  it.each([
    ['follow:same-site', { follow: 'same-site' }],
    ['skip:ads.example.com', { skip: 'ads.example.com' }],
    ['skip:https://www.example.com/search?q=a:b', { skip: 'https://www.example.com/search?q=a:b' }],
    ['capture:https://x.com/', { capture: 'https://x.com/' }],
    ['follow:', null],
    ['follow', null],
    ['jump:any', null],
    [':any', null],
    ['Follow:any', null],
  ])('%j → %j', (param, expected) => {
    expect(parseRuleParam(param)).toEqual(expected);
  });
});

it('parseRuleParam refuses a 2049-character pattern and takes 2048', () => {
  expect(parseRuleParam(`skip:${'a'.repeat(2049)}`)).toBeNull();
  expect(parseRuleParam(`skip:${'a'.repeat(2048)}`)).toEqual({ skip: 'a'.repeat(2048) });
});

describe('rulesFromFixed', () => {
  it('reads back what checkCrawlRules fixed', () => {
    const res = checkCrawlRules(['https://a.com/'], [{ skip: 'https://A.com:443/x' }, { follow: 'same-origin' }]);
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(rulesFromFixed(JSON.parse(JSON.stringify(res.fixed)))).toEqual(res.rules);
  });
  it('refuses anything else', () => {
    expect(() => rulesFromFixed([{ follow: 'a', skip: 'b' }])).toThrow(/fixed form/);
    expect(() => rulesFromFixed('nope')).toThrow(/fixed form/);
  });
});
