import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostOf } from './crawl.ts';
import { checkParsedUrl, checkUrl, createAddressPolicy, parseAllowlist } from './address-policy.ts';
import { baseAuthority, hrefReads, isNofollow, resolveLink, resolveLinkUrl, selectLinks, type FollowPageLinks } from './links.ts';
import type { Rule } from './rules/index.ts';
import { keyOfUrl, parseHttpUrl } from './rules/url-key.ts';

const seeds = ['https://www.example.com/'];
const rules: Rule[] = [
  { action: 'skip', pattern: 'ads.example.com' },
  { action: 'capture', pattern: 'https://www.example.com/pdf/' },
  { action: 'follow', pattern: 'same-site' },
];
const page = (url: string, links: (string | { href: string; rel?: string })[], finalUrl?: string): FollowPageLinks => ({
  url,
  ...(finalUrl === undefined ? {} : { finalUrl }),
  links: links.map((l) => (typeof l === 'string' ? { href: l } : l)),
});

describe('selectLinks', () => {
  it('decides each distinct link once: follow and capture become candidates in discovery order, everything is tallied', () => {
    const res = selectLinks(rules, seeds, [
      page('https://www.example.com/', ['/a', 'https://ads.example.com/x', '/pdf/1.pdf', 'https://other.org/', '/a', 'https://blog.example.com/']),
      page('https://www.example.com/a', ['/b', '/pdf/1.pdf', 'https://ads.example.com:8443/y']),
    ]);
    expect(res.candidates).toEqual([
      { url: 'https://www.example.com/a', host: 'www.example.com', action: 'follow' },
      { url: 'https://www.example.com/pdf/1.pdf', host: 'www.example.com', action: 'capture' },
      { url: 'https://blog.example.com/', host: 'blog.example.com', action: 'follow' },
      { url: 'https://www.example.com/b', host: 'www.example.com', action: 'follow' },
    ]);
    expect(res.decisions).toEqual([
      { rule: 3, action: 'follow', hostname: 'www.example.com', links: 2, samples: ['https://www.example.com/a', 'https://www.example.com/b'] },
      { rule: 1, action: 'skip', hostname: 'ads.example.com', links: 2, samples: ['https://ads.example.com/x', 'https://ads.example.com:8443/y'] },
      { rule: 2, action: 'capture', hostname: 'www.example.com', links: 1, samples: ['https://www.example.com/pdf/1.pdf'] },
      { rule: 0, action: 'skip', hostname: 'other.org', links: 1, samples: ['https://other.org/'] },
      { rule: 3, action: 'follow', hostname: 'blog.example.com', links: 1, samples: ['https://blog.example.com/'] },
    ]);
  });

  it('honours rel="nofollow" as a token list, and those links are not counted', () => {
    const res = selectLinks(rules, seeds, [
      page('https://www.example.com/', [
        { href: '/1', rel: 'nofollow' },
        { href: '/2', rel: 'noopener NoFollow' },
        { href: '/3', rel: '\tnofollow\n' },
        { href: '/4', rel: 'nofollowed' },
        { href: '/5', rel: 'external' },
        { href: '/6', rel: '' },
      ]),
    ]);
    expect(res.candidates.map((c) => c.url)).toEqual(['https://www.example.com/4', 'https://www.example.com/5', 'https://www.example.com/6']);
    expect(res.decisions.reduce((n, d) => n + d.links, 0)).toBe(3);
  });

  it('takes only http(s) links; others and unparseable hrefs are not counted', () => {
    const res = selectLinks([{ action: 'follow', pattern: 'any' }], seeds, [
      page('https://www.example.com/', [
        'mailto:a@example.com',
        'javascript:void(0)',
        'ftp://example.com/f',
        'tel:123',
        'data:text/plain,x',
        'http://[::1',
        'HTTP://Other.ORG/x',
        '//cdn.example.net/y',
      ]),
    ]);
    expect(res.candidates.map((c) => c.url)).toEqual(['http://other.org/x', 'https://cdn.example.net/y']);
    expect(res.decisions.reduce((n, d) => n + d.links, 0)).toBe(2);
  });

  it('drops the fragment and normalises nothing else', () => {
    const res = selectLinks([{ action: 'follow', pattern: 'any' }], seeds, [
      page('https://www.example.com/', [
        '/a#one',
        '/a#two',
        '/a#',
        '/a?b=2&a=1',
        '/a?a=1&b=2',
        '/a/',
        '/A',
        'https://u:p@www.example.com/a',
        'https://www.example.com:443/a',
      ]),
    ]);
    expect(res.candidates.map((c) => c.url)).toEqual([
      'https://www.example.com/a',
      'https://www.example.com/a?b=2&a=1',
      'https://www.example.com/a?a=1&b=2',
      'https://www.example.com/a/',
      'https://www.example.com/A',
      'https://u:p@www.example.com/a',
    ]);
  });

  it('resolves relative links against the final URL', () => {
    const res = selectLinks(rules, seeds, [page('https://www.example.com/old/', ['next', '../up'], 'https://www.example.com/new/here')]);
    expect(res.candidates.map((c) => c.url)).toEqual(['https://www.example.com/new/next', 'https://www.example.com/up']);
  });

  it('a page that redirected off-site yields no links and counts nothing: a redirect cannot widen the crawl', () => {
    const res = selectLinks(rules, seeds, [
      page('https://www.example.com/out', ['/x', 'https://elsewhere.org/y'], 'https://elsewhere.org/landing'),
      page('https://www.example.com/ads', ['/z'], 'https://ads.example.com/'),
      page('https://www.example.com/doc', ['/w'], 'https://www.example.com/pdf/doc'),
      page('https://www.example.com/bad', ['/v'], 'not a url'),
    ]);
    expect(res).toEqual({ candidates: [], decisions: [], skipped: [], refused: [] });
  });

  it('a page the rules do not follow by its requested URL yields no links either', () => {
    const res = selectLinks(rules, seeds, [page('https://www.example.com/pdf/x', ['/a'], 'https://www.example.com/')]);
    expect(res).toEqual({ candidates: [], decisions: [], skipped: [], refused: [] });
  });

  it('a redirect that stays followed is fine', () => {
    const res = selectLinks(rules, seeds, [page('http://www.example.com/', ['/a'], 'https://blog.example.com/')]);
    expect(res.candidates).toEqual([{ url: 'https://blog.example.com/a', host: 'blog.example.com', action: 'follow' }]);
  });

  it('host names in the tallies drop the port; at most 5 samples, every distinct URL counted', () => {
    const links = Array.from({ length: 8 }, (_, i) => `https://www.example.com:${8000 + i}/p`);
    const res = selectLinks(
      [
        { action: 'skip', pattern: 'www.example.com' },
        { action: 'follow', pattern: 'any' },
      ],
      seeds,
      [page('https://other.org/', links)],
    );
    expect(res.candidates).toEqual([]);
    expect(res.decisions).toEqual([{ rule: 1, action: 'skip', hostname: 'www.example.com', links: 8, samples: links.slice(0, 5) }]);
  });

  it('tolerates missing links', () => {
    expect(selectLinks(rules, seeds, [{ url: 'https://www.example.com/' } as FollowPageLinks])).toEqual({
      candidates: [],
      decisions: [],
      skipped: [],
      refused: [],
    });
  });

  it('property: candidates are distinct, fragment-free http(s), never skip; tallies count exactly the decided links', () => {
    const href = fc.oneof(
      fc.constantFrom(
        '/a',
        '/a#x',
        'b',
        '../c',
        '?q',
        '#only',
        'https://ads.example.com/',
        'https://blog.example.com/d',
        'https://blog.example.com:8443/e',
        'http://WWW.example.com./f',
        'mailto:x@y',
        'http://other.org',
        '/pdf/z',
      ),
      fc.string(),
    );
    const link = fc.record({ href, rel: fc.option(fc.constantFrom('nofollow', 'noopener', 'NOFOLLOW x'), { nil: undefined }) });
    const pg = fc.record({
      url: fc.constantFrom('https://www.example.com/', 'https://www.example.com/dir/', 'https://blog.example.com/'),
      finalUrl: fc.option(fc.constantFrom('https://www.example.com/moved', 'https://elsewhere.org/', 'https://ads.example.com/'), { nil: undefined }),
      links: fc.array(link, { maxLength: 15 }),
    });
    fc.assert(
      fc.property(fc.array(pg, { maxLength: 5 }), (pages) => {
        const res = selectLinks(
          rules,
          seeds,
          pages.map((p) => (p.finalUrl === undefined ? { url: p.url, links: p.links } : p)),
        );
        const urls = res.candidates.map((c) => c.url);
        expect(new Set(urls).size).toBe(urls.length);
        for (const u of urls) {
          expect(u).toMatch(/^https?:\/\//);
          expect(u).not.toContain('#');
        }
        // the host a page row records is the one its URL's text gives
        for (const c of res.candidates) expect(c.host).toBe(hostOf(c.url));
        const counted = res.decisions.reduce((n, d) => n + d.links, 0);
        const nonSkip = res.decisions.filter((d) => d.action !== 'skip').reduce((n, d) => n + d.links, 0);
        expect(nonSkip).toBe(urls.length);
        expect(counted).toBeGreaterThanOrEqual(urls.length);
        // the skipped URLs are listed, each once, exactly as many as the skip tallies count
        expect(new Set(res.skipped).size).toBe(res.skipped.length);
        expect(res.skipped.length).toBe(counted - nonSkip);
        for (const u of res.skipped) expect(urls).not.toContain(u);
        for (const d of res.decisions) expect(d.samples.length).toBe(Math.min(5, d.links));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('isNofollow / resolveLink', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['nofollow', true],
    ['NOFOLLOW', true],
    ['noopener nofollow noreferrer', true],
    ['no-follow', false],
    ['nofollow2', false],
  ])('rel %j → %s', (rel, expected) => {
    expect(isNofollow(rel)).toBe(expected);
  });
  it.each([
    ['/a#b', 'https://x.com/d/', 'https://x.com/a'],
    ['#b', 'https://x.com/d/', 'https://x.com/d/'],
    ['https://bücher.de/', 'https://x.com/', 'https://xn--bcher-kva.de/'],
    ['http://[0::1]:80/', 'https://x.com/', 'http://[::1]/'],
    ['ftp://x.com/', 'https://x.com/', null],
    ['http://', 'https://x.com/', null],
  ])('%j on %j → %j', (href, base, expected) => {
    expect(resolveLink(href, base)).toBe(expected);
  });
});

/** hrefs as pages write them and as they are forged: pieces such as schemes, slashes, backslashes,
 * tabs and newlines, userinfo, ports, escapes, IP forms and Unicode hosts, plus any string or URL */
const hrefPiece = fc.constantFrom(
  'https://',
  'http://',
  'HTTP://',
  '//',
  '/',
  '../',
  './',
  '?',
  '#',
  '@',
  ':',
  'u:p@',
  'user@',
  ':8080',
  ':443',
  ':80',
  '%2e',
  '%2F',
  '%41',
  '%zz',
  '\\',
  '\t',
  '\n',
  ' ',
  'EXAMPLE.com',
  'www.example.com.',
  'bücher.de',
  'xn--bcher-kva.de',
  '0x7f.1',
  '127.0.0.1',
  '10.1.2.3',
  '[::1]',
  '[::ffff:127.0.0.1]',
  '2130706433',
  'localhost',
  'a',
  'b/c',
  'q=1&r=2',
  '..',
  '.',
  ';x',
  '~',
  'ä',
  '\u{1F600}',
);
const oddHref = fc.oneof(
  fc.array(hrefPiece, { maxLength: 8 }).map((p) => p.join('')),
  fc.string({ maxLength: 40 }),
  fc.webUrl({ withFragments: true, withQueryParameters: true }),
);

describe('one parse per link', () => {
  // A link is parsed once: its policy check and its rule key read the URL object resolveLinkUrl
  // made. Before, each re-parsed the resolved text. Both must give the same answers for any href,
  // including the odd ones (userinfo, IP forms, ports, dot segments, escapes, Unicode hosts).
  const base = fc.constantFrom('https://www.example.com/dir/page?x=1', 'http://u:p@127.0.0.1:8080/a/b', 'https://xn--bcher-kva.de/', 'http://[::1]/');
  const policies = [createAddressPolicy(), createAddressPolicy(parseAllowlist('127.0.0.0/8,localhost:8080,www.example.com:8080'))];

  it('property: the policy verdict and the rule key of the parsed link equal those of its re-parsed text', () => {
    fc.assert(
      fc.property(oddHref, base, (h, b) => {
        const text = resolveLink(h, b);
        const u = resolveLinkUrl(h, b);
        expect(u?.href ?? null).toBe(text);
        if (u === null || text === null) return;
        for (const policy of policies) expect(checkParsedUrl(policy, u)).toEqual(checkUrl(policy, text));
        const reparsed = parseHttpUrl(text);
        expect(reparsed).not.toBeNull();
        expect(keyOfUrl(u)).toEqual(keyOfUrl(reparsed!));
        // and the key's href is the URL without userinfo and fragment, however keyOfUrl gets there
        const bare = new URL(text);
        bare.username = '';
        bare.password = '';
        bare.hash = '';
        expect(keyOfUrl(u).href).toBe(keyOfUrl(u).origin + bare.href.slice(bare.protocol.length + 2 + bare.host.length));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("a site's navigation is resolved once a level", () => {
  // The selector skips an href it met before when its resolution cannot depend on the page it is
  // on: one starting with '/' reads only the base's authority, one starting with http(s):// reads
  // nothing of the base. These claims are what make the skip exact.
  const bases = [
    'https://www.example.com/',
    'https://www.example.com/dir/page?x=1#f',
    'https://www.example.com/a/b/c/',
    'https://www.example.com:8443/dir/',
    'http://www.example.com/dir/',
    'http://u:p@www.example.com/a/b',
    'http://u:p@www.example.com/',
    'http://127.0.0.1:8080/x?y',
    'http://127.0.0.1:8080/',
    'https://xn--bcher-kva.de/deep/er/',
    'https://bücher.de/',
    'http://[::1]/a',
    'http://[::1]/b/c?d',
  ];
  const base = fc.constantFrom(...bases);

  it('property: an href starting with "/" resolves alike on every base of one authority; an absolute one on every base', () => {
    fc.assert(
      fc.property(oddHref, base, base, (h, b1, b2) => {
        const reads = hrefReads(h);
        const a1 = baseAuthority(b1);
        const a2 = baseAuthority(b2);
        expect(a1).toBeDefined();
        if (reads === 'nothing' || (reads === 'authority' && a1 === a2)) expect(resolveLink(h, b1)).toBe(resolveLink(h, b2));
      }),
      { numRuns: 5000 },
    );
  });

  it('baseAuthority is the base up to its path, userinfo and port kept; none for what is not http(s)', () => {
    expect(baseAuthority('http://u:p@WWW.Example.com:8080/a/b?c#d')).toBe('http://u:p@www.example.com:8080');
    expect(baseAuthority('https://x.com')).toBe('https://x.com');
    expect(baseAuthority('https://x.com:443/')).toBe('https://x.com');
    expect(baseAuthority('ftp://x.com/')).toBeUndefined();
    expect(baseAuthority('not a url')).toBeUndefined();
    expect(hrefReads('/a')).toBe('authority');
    expect(hrefReads('//other.org/')).toBe('authority');
    expect(hrefReads('HTTPS://x.com/')).toBe('nothing');
    expect(hrefReads(' /a')).toBeUndefined();
    expect(hrefReads('a/b')).toBeUndefined();
    expect(hrefReads('http:/x')).toBeUndefined();
  });

  // A leading space is trimmed by the URL parser, so ' ' + href resolves as href does, but it
  // starts with neither '/' nor a scheme: the selector resolves it on every page. Both must select
  // the same.
  it('property: selecting with the skip equals selecting without it', () => {
    const link = fc.record({
      href: fc.oneof(
        oddHref,
        fc.constantFrom('/', '/nav/a', '/nav/b#top', '//www.example.com/nav/c', 'https://blog.example.com/x', 'http://', '/\\ads.example.com/'),
      ),
      rel: fc.option(fc.constantFrom('nofollow', 'noopener'), { nil: undefined }),
    });
    const pg = fc.record({
      url: fc.constantFrom('https://www.example.com/', 'https://www.example.com/dir/', 'https://blog.example.com/a/b', 'http://u:p@www.example.com/'),
      finalUrl: fc.option(fc.constantFrom('https://www.example.com/moved/', 'https://blog.example.com/', 'not a url'), { nil: undefined }),
      links: fc.array(link, { maxLength: 12 }),
    });
    fc.assert(
      fc.property(fc.array(pg, { maxLength: 6 }), (pages) => {
        const strip = (p: (typeof pages)[number]): FollowPageLinks =>
          p.finalUrl === undefined ? { url: p.url, links: p.links } : { url: p.url, finalUrl: p.finalUrl, links: p.links };
        const withSkip = selectLinks(rules, seeds, pages.map(strip));
        const without = selectLinks(
          rules,
          seeds,
          pages.map((p) => ({ ...strip(p), links: p.links.map((l) => ({ ...l, href: ' ' + l.href })) })),
        );
        expect(withSkip).toEqual(without);
      }),
      { numRuns: 2000 },
    );
  });

  it('a link every page carries is decided and tallied once; the same path on another host is its own link, a protocol-relative one is not', () => {
    const nav = ['/', '/about', 'https://www.example.com/contact', '//www.example.com/help'];
    const res = selectLinks(rules, seeds, [
      page('https://www.example.com/a/', [...nav, 'x']),
      page('https://www.example.com/b/c', [...nav, 'x']),
      page('https://blog.example.com/', [...nav]),
    ]);
    expect(res.candidates.map((c) => c.url)).toEqual([
      'https://www.example.com/',
      'https://www.example.com/about',
      'https://www.example.com/contact',
      'https://www.example.com/help',
      'https://www.example.com/a/x',
      'https://www.example.com/b/x',
      'https://blog.example.com/',
      'https://blog.example.com/about',
    ]);
    expect(res.decisions.reduce((n, d) => n + d.links, 0)).toBe(8);
  });
});

describe('selectLinks: address policy and per-page cap', () => {
  const follow: Rule[] = [{ action: 'follow', pattern: 'any' }];
  const seed = 'https://www.example.com/';

  it('refuses what the policy refuses, tallied per host and code, never as a rule decision', () => {
    const long = `https://${'a'.repeat(3000)}.example/`;
    const res = selectLinks(follow, [seed], [page(seed, ['http://127.0.0.1:8333/buckets/', 'http://localhost/', long, '/ok'])], {
      refuse: (u) => checkParsedUrl(createAddressPolicy(), u),
    });
    expect(res.candidates.map((c) => c.url)).toEqual(['https://www.example.com/ok']);
    expect(res.decisions.every((d) => d.hostname.length <= 253)).toBe(true);
    expect(res.refused.map((r) => [r.hostname.length <= 253, r.code, r.urls])).toEqual([
      [true, 'address', 1],
      [true, 'local-name', 1],
      [true, 'host-too-long', 1],
    ]);
    expect(res.refused[2]!.samples[0]!.length).toBeLessThanOrEqual(300);
  });

  it('without a policy, still refuses hosts over 253 characters and URLs over 8 KiB', () => {
    const res = selectLinks(follow, [seed], [page(seed, [`https://${'b'.repeat(300)}.example/`, `/${'p'.repeat(9000)}`, '/fine'])]);
    expect(res.candidates).toHaveLength(1);
    expect(res.refused.map((r) => r.code).sort()).toEqual(['host-too-long', 'url-too-long']);
  });

  it('reads at most maxLinksPerPage links of a page and counts the rest', () => {
    const hrefs = Array.from({ length: 25 }, (_, i) => `/p${i}`);
    const res = selectLinks(follow, [seed], [page(seed, hrefs)], { maxLinksPerPage: 10 });
    expect(res.candidates).toHaveLength(10);
    expect(res.refused).toEqual([{ hostname: 'www.example.com', code: 'too-many-links', urls: 15, samples: [seed] }]);
  });
});
