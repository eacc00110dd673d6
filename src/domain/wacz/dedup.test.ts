import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEDUP_LIMITS, PayloadIndex, payloadDigest, planRecords, requiredArchives, REVISIT_PROFILE, storedPayloads, type StoredPayload } from './dedup.ts';
import { parseCdxj } from './cdx.ts';
import { readWacz } from './read.ts';
import { parseHttpResponse, parseWarcGz, type HttpExchange } from './warc.ts';
import { packWacz, WARC_PATH } from './write.ts';

const T0 = Date.parse('2025-01-01T00:00:00.000Z');

function exchange(url: string, body: Buffer, status = 200, at = T0): HttpExchange {
  const u = new URL(url);
  return {
    url,
    date: new Date(at),
    request: { method: 'GET', target: u.pathname, httpVersion: '1.1', headers: [['Host', u.host]] },
    response: {
      status,
      statusText: 'OK',
      httpVersion: '1.1',
      headers: [
        ['Content-Type', 'text/css'],
        ['Content-Length', String(body.length)],
      ],
      body,
    },
  };
}

/** Asset i of a pool: distinct bytes, at least minPayloadBytes long. */
const asset = (i: number): Buffer => Buffer.alloc(DEDUP_LIMITS.minPayloadBytes + i, `asset-${i};`);

/** A crawl as the workflow runs it, one page after another: each page's known payloads are the index's top. */
function simulate(pages: number[][]) {
  const index = new PayloadIndex();
  return pages.map((assets, p) => {
    const key = `crawl/0/page-${p}.wacz`;
    const xs = assets.map((a) => exchange(`http://h.test/a${a}.css`, asset(a)));
    const plan = planRecords(xs, index.top(), key);
    const stored = storedPayloads(xs, plan, key);
    index.add(stored);
    index.used(plan.flatMap((r) => (r.kind === 'revisit' ? [r.of.digest] : [])));
    return { key, xs, plan, stored, requires: requiredArchives(plan, key) };
  });
}

const crawl = fc.array(fc.array(fc.nat({ max: 30 }), { maxLength: 12 }), { minLength: 1, maxLength: 15 });

describe('payload dedup within a crawl', () => {
  it("a page sharing an earlier page's assets revisits them and requires that page", () => {
    const [first, second] = simulate([
      [1, 2, 3],
      [2, 3, 4],
    ]);
    expect(first!.plan.map((r) => r.kind)).toEqual(['response', 'response', 'response']);
    expect(first!.requires).toEqual([]);
    expect(second!.plan.map((r) => r.kind)).toEqual(['revisit', 'revisit', 'response']);
    expect(second!.requires).toEqual([first!.key]);
    expect(second!.stored.map((s) => s.uri)).toEqual(['http://h.test/a4.css']);
  });

  it('every revisit refers to a payload stored in full in an earlier archive it requires', () => {
    fc.assert(
      fc.property(crawl, (pages) => {
        const run = simulate(pages);
        const position = new Map(run.map((r, i) => [r.key, i]));
        const fullIn = new Map<string, Set<string>>(
          run.map((r) => [r.key, new Set(r.xs.filter((_, i) => r.plan[i]!.kind === 'response').map((x) => payloadDigest(x.response.body)))]),
        );
        for (const [i, r] of run.entries()) {
          for (const [j, p] of r.plan.entries()) {
            if (p.kind !== 'revisit') continue;
            expect(p.of.digest).toBe(payloadDigest(r.xs[j]!.response.body));
            expect(r.requires).toContain(p.of.archiveKey);
            expect(fullIn.get(p.of.archiveKey)!.has(p.of.digest)).toBe(true);
            expect(position.get(p.of.archiveKey)!).toBeLessThan(i);
          }
        }
      }),
    );
  });

  it('no archive requires itself, and the requires graph has no cycle', () => {
    fc.assert(
      fc.property(crawl, (pages) => {
        const run = simulate(pages);
        const edges = new Map(run.map((r) => [r.key, r.requires]));
        for (const r of run) expect(r.requires).not.toContain(r.key);
        // depth-first: a node met again while still on the path closes a cycle
        const state = new Map<string, 'open' | 'done'>();
        const visit = (k: string): void => {
          expect(state.get(k)).not.toBe('open');
          if (state.get(k) === 'done') return;
          state.set(k, 'open');
          for (const n of edges.get(k) ?? []) visit(n);
          state.set(k, 'done');
        };
        for (const r of run) visit(r.key);
      }),
    );
  });

  it('each distinct payload is stored in full once across the crawl (while the index holds it)', () => {
    fc.assert(
      fc.property(crawl, (pages) => {
        const run = simulate(pages);
        const full = run.flatMap((r) => r.xs.filter((_, i) => r.plan[i]!.kind === 'response').map((x) => payloadDigest(x.response.body)));
        // a payload repeated inside one page is written in full there once per exchange
        const perPage = run.map((r) => new Set(r.xs.filter((_, i) => r.plan[i]!.kind === 'response').map((x) => payloadDigest(x.response.body))));
        const across = perPage.flatMap((s) => [...s]);
        expect(new Set(across).size).toBe(across.length);
        expect(new Set(full).size).toBe(new Set(pages.flat()).size);
      }),
    );
  });

  it('leaves small payloads, non-200 answers and a digest of its own archive alone', () => {
    const small = Buffer.alloc(DEDUP_LIMITS.minPayloadBytes - 1, 'x');
    const big = asset(1);
    const known: StoredPayload[] = [small, big].map((b) => ({
      digest: payloadDigest(b),
      uri: 'http://h.test/x',
      date: new Date(T0).toISOString(),
      archiveKey: 'a.wacz',
      bytes: b.length,
    }));
    expect(planRecords([exchange('http://h.test/s', small), exchange('http://h.test/n', big, 404)], known, 'b.wacz').map((r) => r.kind)).toEqual([
      'response',
      'response',
    ]);
    expect(planRecords([exchange('http://h.test/b', big)], known, 'a.wacz')[0]!.kind).toBe('response');
    expect(planRecords([exchange('http://h.test/b', big)], known, 'b.wacz')[0]!.kind).toBe('revisit');
  });

  it('the index stays bounded and keeps the most used payloads', () => {
    const index = new PayloadIndex();
    const payload = (i: number): StoredPayload => ({
      digest: `sha256:${i}`,
      uri: `http://h.test/${i}`,
      date: new Date(T0).toISOString(),
      archiveKey: 'a.wacz',
      bytes: 1000,
    });
    index.add([payload(0)]);
    index.used(['sha256:0', 'sha256:0']);
    index.add(Array.from({ length: DEDUP_LIMITS.indexed + 50 }, (_, i) => payload(i + 1)));
    expect(index.size).toBe(DEDUP_LIMITS.indexed);
    expect(index.top(1)[0]!.digest).toBe('sha256:0');
    expect(index.top().length).toBe(DEDUP_LIMITS.knownPerCapture);
  });
});

describe('a WACZ with revisit records', () => {
  it('writes identical-payload-digest revisits with the referred record, indexes them as warc/revisit, and names the archives it requires', async () => {
    const css = asset(3);
    const known: StoredPayload[] = [
      { digest: payloadDigest(css), uri: 'http://h.test/style.css', date: '2024-12-31T00:00:00.000Z', archiveKey: 'crawl/0/first.wacz', bytes: css.length },
    ];
    const xs = [exchange('http://h.test/page2', Buffer.from('<html>two</html>')), exchange('http://h.test/style.css', css)];
    xs[0]!.response.headers = [['Content-Type', 'text/html']];
    const packed = await packWacz({
      exchanges: xs,
      pages: [{ url: 'http://h.test/page2', ts: new Date(T0) }],
      software: 't/1',
      created: new Date(T0),
      dedup: { known, archiveKey: 'crawl/0/second.wacz' },
    });
    expect(packed.requires).toEqual(['crawl/0/first.wacz']);
    expect(packed.revisited).toEqual([payloadDigest(css)]);
    const w = await readWacz(packed.wacz);
    expect(w.datapackage.requires).toEqual(['crawl/0/first.wacz']);
    const records = parseWarcGz(w.entries.get(WARC_PATH)!.data);
    const revisit = records.find((r) => r.headers['WARC-Type'] === 'revisit')!;
    expect(revisit.headers).toMatchObject({
      'WARC-Target-URI': 'http://h.test/style.css',
      'WARC-Profile': REVISIT_PROFILE,
      'WARC-Refers-To-Target-URI': 'http://h.test/style.css',
      'WARC-Refers-To-Date': '2024-12-31T00:00:00.000Z',
      'WARC-Payload-Digest': payloadDigest(css),
    });
    expect(parseHttpResponse(revisit.block)).toMatchObject({ status: 200, body: Buffer.alloc(0) });
    expect(records.filter((r) => r.headers['WARC-Type'] === 'response').map((r) => r.headers['WARC-Target-URI'])).toEqual(['http://h.test/page2']);
    const cdx = parseCdxj(w.entries.get('indexes/index.cdx')!.data.toString('utf8'));
    expect(cdx.find((e) => e.url === 'http://h.test/style.css')).toMatchObject({
      mime: 'warc/revisit',
      status: '200',
      digest: payloadDigest(css),
      offset: revisit.offset,
      // the revisit's own gzip member
      length: revisit.length,
    });
  });

  it('writes a GET revisit alone, without a block digest; a POST revisit keeps the request replay matches its body with', async () => {
    const css = asset(4);
    const known: StoredPayload[] = [
      { digest: payloadDigest(css), uri: 'http://h.test/s.css', date: '2024-12-31T00:00:00.000Z', archiveKey: 'crawl/0/first.wacz', bytes: css.length },
    ];
    const get = exchange('http://h.test/s.css', css);
    const post = exchange('http://h.test/api', css);
    post.request = { ...post.request, method: 'POST' };
    const packed = await packWacz({
      exchanges: [get, post],
      pages: [],
      software: 't/1',
      created: new Date(T0),
      dedup: { known, archiveKey: 'crawl/0/b.wacz' },
    });
    const records = parseWarcGz((await readWacz(packed.wacz)).entries.get(WARC_PATH)!.data);
    const typed = records.map((r) => [r.headers['WARC-Type'], r.headers['WARC-Target-URI']]);
    expect(typed).toEqual([
      ['warcinfo', undefined],
      ['revisit', 'http://h.test/s.css'],
      ['revisit', 'http://h.test/api'],
      ['request', 'http://h.test/api'],
    ]);
    const postRevisit = records[2]!;
    expect(records[3]!.headers['WARC-Concurrent-To']).toBe(postRevisit.headers['WARC-Record-ID']);
    for (const r of records.filter((x) => x.headers['WARC-Type'] === 'revisit')) expect(r.headers['WARC-Block-Digest']).toBeUndefined();
  });

  it('writes no requires without revisits', async () => {
    const packed = await packWacz({
      exchanges: [exchange('http://h.test/a', asset(1))],
      pages: [],
      software: 't/1',
      created: new Date(T0),
      dedup: { known: [], archiveKey: 'k.wacz' },
    });
    expect(packed.requires).toEqual([]);
    expect((await readWacz(packed.wacz)).datapackage.requires).toBeUndefined();
    expect(packed.stored.map((s) => s.archiveKey)).toEqual(['k.wacz']);
  });
});
