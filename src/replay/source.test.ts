import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkAppQuery, checkCollection, MAX_COLLECTION_SOURCES } from './source.ts';
import { isRegistrationQuery } from './service-worker.ts';

/** sources made of the characters that change how a URL is read, most of them under /wacz/ */
const sources = fc
  .tuple(
    fc.constantFrom('/wacz/', '/wacz', '//', '/', 'http://a.test/', ''),
    fc.string({ unit: fc.constantFrom('a', '.', '/', '\\', '%', '2', 'e', 'f', '5', 'c', '?', '#', ':', '@', '.wacz'), maxLength: 12 }),
  )
  .map(([head, tail]) => head + tail);

const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

describe('checkAppQuery', () => {
  it('takes no query, or one source under /wacz/ naming a .wacz key, as the picker links it', () => {
    expect(checkAppQuery('')).toEqual({ ok: true, source: null, key: null });
    const source = '/wacz/crawl/a%20page.wacz?X-Amz-Signature=ab&X-Amz-Date=1';
    expect(checkAppQuery(query({ source }))).toEqual({ ok: true, source, key: 'crawl/a page.wacz' });
    // the signature is the /wacz/ proxy's to check
    expect(checkAppQuery(query({ source: '/wacz/a.wacz' }))).toEqual({ ok: true, source: '/wacz/a.wacz', key: 'a.wacz' });
  });

  it('refuses another host, another path, and every other parameter of ReplayWeb.page, naming the problem', () => {
    for (const source of [
      'https://attacker.test/x.wacz',
      '//attacker.test/wacz/x.wacz',
      '/\\attacker.test/wacz/x.wacz',
      '/wacz/\\..\\x.wacz',
      'wacz/x.wacz',
      '/w/x.wacz',
      '/wacz/a/../b.wacz',
      '/wacz/%2e%2e/b.wacz',
      '/wacz/a.html?X-Amz-Signature=1',
      '/wacz/a.wacz#x',
      'googledrive://x',
      'file:///x.wacz',
    ]) {
      const checked = checkAppQuery(query({ source }));
      expect(checked, source).toMatchObject({ ok: false, status: 400 });
    }
    expect(checkAppQuery(query({ source: 'https://attacker.test/x.wacz' }))).toMatchObject({ error: expect.stringContaining('/wacz/') });
    for (const name of ['config', 'swName', 'adblockUrl', 'customColl', 'state', 'embed', 'baseUrlSourcePrefix']) {
      expect(checkAppQuery(`source=%2Fwacz%2Fa.wacz&${name}=x`)).toEqual({ ok: false, status: 400, error: expect.stringContaining(`"${name}"`) });
    }
    expect(checkAppQuery('source=%2Fwacz%2Fa.wacz&source=https%3A%2F%2Fattacker.test%2Fx.wacz')).toMatchObject({
      ok: false,
      status: 400,
      error: 'replay takes exactly one source',
    });
  });

  it('accepts a source only if a browser resolves it to this server under /wacz/', () => {
    fc.assert(
      fc.property(sources, (source) => {
        const checked = checkAppQuery(query({ source }));
        if (!checked.ok) return;
        const resolved = new URL(source, 'http://127.0.0.1:8899/?x');
        expect(resolved.origin).toBe('http://127.0.0.1:8899');
        expect(resolved.pathname.startsWith('/wacz/')).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

const collection = (members: string[]) => `/collection/${members.map(encodeURIComponent).join('/')}/collection.json`;

describe('checkCollection', () => {
  const signed = (key: string) => `/wacz/${key}?X-Amz-Signature=ab&X-Amz-Date=1`;

  it('takes an archive and those it requires, each a signed /wacz/ source of replay, as the picker links them', () => {
    const path = collection([signed('c/a%20page.wacz'), signed('c/b.wacz')]);
    expect(checkAppQuery(query({ source: path }))).toEqual({ ok: true, source: path, key: 'c/a page.wacz' });
    expect(checkCollection(path.slice('/collection/'.length))).toEqual({
      ok: true,
      sources: [
        { key: 'c/a page.wacz', source: signed('c/a%20page.wacz') },
        { key: 'c/b.wacz', source: signed('c/b.wacz') },
      ],
    });
  });

  it('refuses a member that is not a signed .wacz of replay, too many members, or another name', () => {
    for (const member of [
      'https://attacker.test/x.wacz',
      '//attacker.test/wacz/x.wacz',
      '/wacz/a/../b.wacz',
      '/wacz/a.html?X-Amz-Signature=1',
      '/wacz/a.wacz',
      '/wacz/a.wacz#x',
      '/collection/x/collection.json',
    ]) {
      expect(checkAppQuery(query({ source: collection([signed('ok.wacz'), member]) })), member).toMatchObject({ ok: false, status: 400 });
    }
    expect(
      checkCollection(`${collection(Array.from({ length: MAX_COLLECTION_SOURCES + 1 }, (_, i) => signed(`${i}.wacz`))).slice('/collection/'.length)}`),
    ).toMatchObject({ ok: false, status: 400 });
    expect(checkCollection(`${encodeURIComponent(signed('a.wacz'))}/other.json`)).toMatchObject({ ok: false, status: 404 });
    expect(checkAppQuery(query({ source: `${collection([signed('a.wacz')])}?x=1` }))).toMatchObject({ ok: false, status: 400 });
  });

  it('every member of an accepted collection resolves to this server under /wacz/', () => {
    fc.assert(
      fc.property(fc.array(sources, { minLength: 1, maxLength: 3 }), (members) => {
        const checked = checkCollection(collection(members.map((m) => `${m}?X-Amz-Signature=1`)).slice('/collection/'.length));
        if (!checked.ok) return;
        for (const s of checked.sources) {
          const resolved = new URL(s.source, 'http://127.0.0.1:8899/collection/x/collection.json');
          expect(resolved.origin).toBe('http://127.0.0.1:8899');
          expect(resolved.pathname.startsWith('/wacz/')).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('isRegistrationQuery', () => {
  it("is ReplayWeb.page's own registration of /sw.js, and nothing a page could add", () => {
    expect(isRegistrationQuery('')).toBe(true);
    expect(isRegistrationQuery('injectScripts=ruffle%2Fruffle.js&allowProxyPaths=ruffle%2F')).toBe(true);
    expect(isRegistrationQuery('injectScripts=https%3A%2F%2Fattacker.test%2Fx.js')).toBe(false);
    expect(isRegistrationQuery('allowProxyPassthrough=1&allowProxyPaths=https%3A%2F%2Fattacker.test%2F')).toBe(false);
  });
});
