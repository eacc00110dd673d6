import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkParsedUrl, createAddressPolicy, parseAllowlist } from './address-policy.ts';
import { authorityOf, plainLink, prefixOf } from './link-resolution.ts';
import { resolveLink, resolveLinkUrl, selectLinks, type FollowPageLinks } from './links.ts';
import type { Rule } from './rules/index.ts';
import { keyOfUrl, parseHttpUrl } from './rules/url-key.ts';

// hrefs near the plain path's edges: dot segments and their escapes, characters the parser encodes
// or drops, scheme-relative starts, hosts the parser rewrites (IPv4 forms, case, trailing dots,
// ports), empty paths, queries and fragments
const piece = fc.constantFrom(
  '/',
  '//',
  '/\\',
  '\\',
  '.',
  '..',
  '%2e',
  '%2E',
  '%',
  '%zz',
  '%41',
  'a',
  'Z',
  '_',
  '-',
  '~',
  "'",
  '"',
  '`',
  '^',
  '|',
  '{',
  '[',
  ']',
  '<',
  ' ',
  '\t',
  '\n',
  '?',
  '??',
  '#',
  '#x',
  '&',
  '=',
  ':',
  '@',
  ';',
  '!',
  '$',
  '*',
  '+',
  ',',
  '(',
  'é',
  '\u0000',
  'nav',
  'p/1',
);
const host = fc.constantFrom(
  'www.example.com',
  'WWW.Example.COM',
  'www.example.com.',
  'x.com:80',
  'x.com:443',
  'x.com:8080',
  'x.com:',
  'x.com:99999',
  '0x7f.1',
  '1.2.3',
  '999.1.1.1',
  '127.0.0.1',
  'localhost',
  'a..b',
  '-',
  'xn--bcher-kva.de',
  'u@x.com',
  'bücher.de',
  '[::1]',
);
const scheme = fc.constantFrom('http://', 'https://', 'HTTP://', 'hTtPs://', 'ftp://', 'http:/', 'http:');
const path = fc.array(piece, { maxLength: 8 }).map((p) => p.join(''));
const href = fc.oneof(
  path.map((p) => `/${p}`),
  fc.tuple(scheme, host, path).map(([s, h, p]) => s + h + p),
  fc.tuple(scheme, host, path).map(([s, h, p]) => `${s + h}/${p}`),
  fc.string({ maxLength: 30 }),
);
const bases = [
  'https://www.example.com/dir/page?x=1#f',
  'http://u:p@www.example.com:8080/a/b',
  'http://127.0.0.1/x?y',
  'https://xn--bcher-kva.de/deep/er/',
  'http://[::1]/a',
  'https://www.example.com./',
];
const base = fc.constantFrom(...bases);
const policies = [createAddressPolicy(), createAddressPolicy(parseAllowlist('127.0.0.0/8,localhost:8080,www.example.com:8080'))];

describe('plainLink', () => {
  it('property: a plain href resolves, without a parse, to exactly what the URL parser gives; its key, host and policy verdict are its authority’s', () => {
    fc.assert(
      fc.property(href, base, (h, b) => {
        const plain = plainLink(h);
        if (plain === undefined) return;
        const a = plain.authority === undefined ? authorityOf(prefixOf(parseHttpUrl(b)!)) : authorityOf(plain.authority);
        const u = resolveLinkUrl(h, b);
        // an authority that does not parse: the href does not resolve either (the selector asks the parser)
        if (a === undefined) {
          expect(u).toBeNull();
          return;
        }
        expect(u?.href).toBe(a.prefix + plain.pathAndQuery);
        expect(u!.host).toBe(a.root.host);
        expect(u!.hostname).toBe(a.root.hostname);
        expect(keyOfUrl(u!)).toEqual({ ...a.key, href: a.key.origin + plain.pathAndQuery });
        for (const policy of policies) expect(checkParsedUrl(policy, u!)?.code).toBe(checkParsedUrl(policy, a.root)?.code);
      }),
      { numRuns: 20_000 },
    );
  });

  it('property: what follows a resolved URL’s prefix, as an href on that authority, resolves to the URL itself', () => {
    fc.assert(
      fc.property(href, base, (h, b) => {
        const u = resolveLinkUrl(h, b);
        if (u === null) return;
        const rest = u.href.slice(prefixOf(u).length);
        expect(rest.startsWith('/')).toBe(true);
        if (!rest.startsWith('//')) expect(resolveLink(rest, u.href)).toBe(u.href);
      }),
      { numRuns: 20_000 },
    );
  });

  it('takes the common shapes and leaves the rest to the parser', () => {
    expect(plainLink('/a/b?c=1#top')).toEqual({ authority: undefined, pathAndQuery: '/a/b?c=1' });
    expect(plainLink('https://x.com')).toEqual({ authority: 'https://x.com', pathAndQuery: '/' });
    expect(plainLink('HTTPS://X.com:443?q#f')).toEqual({ authority: 'HTTPS://X.com:443', pathAndQuery: '/?q' });
    for (const h of ['//x.com/', '/\\x.com', '/a/../b', '/a/%2E/b', '/a b', "/a?b='", 'a/b', ' /a', '/é', 'https://u@x.com/', 'https:///x'])
      expect(plainLink(h)).toBeUndefined();
    expect(authorityOf('http://999.1.1.1')).toBeUndefined();
    expect(authorityOf('HTTP://X.com:80')?.prefix).toBe('http://x.com');
  });
});

describe('selectLinks with plain links', () => {
  const rules: Rule[] = [
    { action: 'skip', pattern: 'https://www.example.com/p/' },
    { action: 'capture', pattern: 'x.com' },
    { action: 'follow', pattern: 'same-site' },
  ];
  const seeds = ['https://www.example.com/'];
  // A leading space is trimmed by the parser, so ' ' + href resolves as href does but is never
  // plain: selecting both ways must give the same, refusals included.
  it('property: selecting plain links without a parse equals selecting them through the parser', () => {
    const link = fc.record({ href, rel: fc.option(fc.constantFrom('nofollow', 'noopener'), { nil: undefined }) });
    const pg = fc.record({
      url: fc.constantFrom('https://www.example.com/', 'https://www.example.com/dir/', 'http://u:p@www.example.com/', 'https://www.example.com./a'),
      links: fc.array(link, { maxLength: 12 }),
    });
    fc.assert(
      fc.property(fc.array(pg, { maxLength: 6 }), fc.constantFrom(...policies), (pages, policy) => {
        const opts = { refuse: (u: URL) => checkParsedUrl(policy, u) };
        const plain = selectLinks(rules, seeds, pages as FollowPageLinks[], opts);
        const parsed = selectLinks(
          rules,
          seeds,
          pages.map((p) => ({ ...p, links: p.links.map((l) => ({ ...l, href: ` ${l.href}` })) })),
          opts,
        );
        expect(plain).toEqual(parsed);
      }),
      { numRuns: 3000 },
    );
  });

  it('a URL over the length limit is refused as the parser path refuses it', () => {
    const long = `/${'a'.repeat(9000)}`;
    const res = selectLinks(rules, seeds, [{ url: 'https://www.example.com/', links: [{ href: long }, { href: 'https://www.example.com/ok' }] }]);
    expect(res.refused).toEqual([expect.objectContaining({ hostname: 'www.example.com', code: 'url-too-long', urls: 1 })]);
    expect(res.candidates.map((c) => c.url)).toEqual(['https://www.example.com/ok']);
  });
});
