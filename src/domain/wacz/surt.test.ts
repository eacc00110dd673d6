import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { surt } from './surt.ts';

const fixture = JSON.parse(readFileSync(new URL('./surt-fixtures.json', import.meta.url), 'utf8')) as { keys: { url: string; key: string }[] };

describe('canonical SURT keys', () => {
  it('the fixture holds the cases the issue names', () => {
    const urls = fixture.keys.map((k) => k.url);
    expect(urls).toContain('http://127.0.0.9:8080/page?b=1&a=2');
    expect(urls).toContain('http://www2.example.com/path?q=1');
    expect(fixture.keys.length).toBeGreaterThanOrEqual(50);
  });

  it.each(fixture.keys)('$url → $key, as cdxj-indexer keys it', ({ url, key }) => {
    expect(surt(url)).toBe(key);
  });
});

const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}[a-z0-9]$/).filter((l) => !/^www\d*$/.test(l));
const host = fc.array(label, { minLength: 2, maxLength: 4 }).map((ls) => ls.join('.'));
const arg = fc.tuple(fc.stringMatching(/^[a-z0-9_-]{1,6}$/), fc.option(fc.stringMatching(/^[a-z0-9_-]{0,6}$/), { nil: undefined }));
const query = fc.array(arg, { minLength: 1, maxLength: 6 }).map((as) => as.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)));
const path = fc.array(fc.stringMatching(/^[a-z0-9_-]{1,8}$/), { maxLength: 4 }).map((ps) => `/${ps.join('/')}`);

describe('canonical SURT properties (fast-check)', () => {
  it('the order of query arguments does not change the key', () => {
    fc.assert(
      fc.property(
        host,
        path,
        query.chain((q) => fc.tuple(fc.constant(q), fc.shuffledSubarray(q, { minLength: q.length, maxLength: q.length }))),
        (h, p, [q, shuffled]) => {
          expect(surt(`http://${h}${p}?${shuffled.join('&')}`)).toBe(surt(`http://${h}${p}?${q.join('&')}`));
        },
      ),
    );
  });

  it('case, a www\\d*. prefix, the default port and a fragment do not change the key', () => {
    fc.assert(
      fc.property(host, path, query, fc.constantFrom('www.', 'www2.', 'WWW10.', ''), fc.constantFrom('http', 'https'), (h, p, q, www, scheme) => {
        const plain = `${scheme}://${h}${p}?${q.join('&')}`;
        const port = scheme === 'http' ? ':80' : ':443';
        expect(surt(`${scheme.toUpperCase()}://${www}${h.toUpperCase()}${port}${p.toUpperCase()}?${q.join('&').toUpperCase()}#frag`)).toBe(surt(plain));
      }),
    );
  });

  it('an IPv4 host is reversed, and a port other than the default is kept', () => {
    fc.assert(
      fc.property(
        fc.ipV4(),
        fc.integer({ min: 1, max: 65535 }).filter((n) => n !== 80),
        path,
        (ip, port, p) => {
          const key = surt(`http://${ip}:${port}${p}`);
          expect(key.slice(0, key.indexOf(')'))).toBe(`${ip.split('.').reverse().join(',')}:${port}`);
        },
      ),
    );
  });
});
