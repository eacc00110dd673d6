import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import yazl from 'yazl';
import { describe, expect, it } from 'vitest';
import { cdxTimestamp, formatCdxj, parseCdxj, surt } from './cdx.ts';
import { readWacz, unzip, waczProblems } from './read.ts';
import { gunzipSync } from 'node:zlib';
import { exchangeRecords, parseHttpResponse, parseWarc, serializeRecord, sha256Hex, type HttpExchange } from './warc.ts';
import { WARC_PATH, writeWacz, type WaczPage } from './write.ts';

const T0 = new Date('2024-05-01T12:34:56.789Z');

function exchange(url: string, status: number, body: string, headers: [string, string][] = [['Content-Type', 'text/html; charset=utf-8']]): HttpExchange {
  const u = new URL(url);
  return {
    url,
    date: T0,
    request: {
      method: 'GET',
      target: u.pathname + u.search,
      httpVersion: '1.1',
      headers: [
        ['Host', u.host],
        ['User-Agent', 'test'],
      ],
    },
    response: {
      status,
      statusText: status === 200 ? 'OK' : 'Found',
      httpVersion: '1.1',
      headers: [...headers, ['Content-Length', String(Buffer.byteLength(body))]],
      body: Buffer.from(body),
    },
    ip: u.hostname,
  };
}

const html = '<html><head><title>Hello</title></head><body><p>Hi there — ünïcødé 日本語</p></body></html>';
const exchanges = [exchange('http://127.0.0.2:8080/old', 302, '', [['Location', '/new']]), exchange('http://127.0.0.2:8080/new?q=1', 200, html)];
const pages: WaczPage[] = [{ url: 'http://127.0.0.2:8080/old', title: 'Hello', text: 'Hi there — ünïcødé 日本語', ts: T0 }];

async function rezip(
  entries: Map<string, { data: Buffer; compressionMethod: number }>,
  change: (name: string, data: Buffer) => { data: Buffer; compress?: boolean },
): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, e] of entries) {
    const c = change(name, e.data);
    z.addBuffer(c.data, name, { compress: c.compress ?? e.compressionMethod !== 0 });
  }
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve) => {
    z.outputStream.on('data', (c: Buffer) => chunks.push(c));
    z.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
  z.end();
  return done;
}

describe('WACZ round trip', () => {
  it('writes the files the spec names, the gzipped WARC stored, the CDX deflated, everything listed with its sha256', async () => {
    const buf = await writeWacz({ exchanges, pages, software: 'capture-ledger-flow/test', created: T0 });
    const w = await readWacz(buf);
    expect([...w.entries.keys()].sort()).toEqual([
      'archive/data.warc.gz',
      'datapackage-digest.json',
      'datapackage.json',
      'indexes/index.cdx',
      'pages/pages.jsonl',
    ]);
    expect(WARC_PATH).toBe('archive/data.warc.gz');
    expect(w.entries.get(WARC_PATH)!.compressionMethod).toBe(0);
    expect(w.entries.get('indexes/index.cdx')!.compressionMethod).toBe(8);
    expect(w.datapackage.profile).toBe('data-package');
    expect(w.datapackage.wacz_version).toBe('1.1.1');
    expect(w.datapackage.software).toBe('capture-ledger-flow/test');
    expect(w.datapackage.mainPageUrl).toBe('http://127.0.0.2:8080/old');
    expect(w.datapackage.resources.map((r) => r.path).sort()).toEqual(['archive/data.warc.gz', 'indexes/index.cdx', 'pages/pages.jsonl']);
    for (const r of w.datapackage.resources) {
      const data = w.entries.get(r.path)!.data;
      expect(r.hash).toBe(`sha256:${sha256Hex(data)}`);
      expect(r.bytes).toBe(data.length);
    }
    expect(w.digest).toEqual({ path: 'datapackage.json', hash: `sha256:${sha256Hex(w.entries.get('datapackage.json')!.data)}` });
    expect(waczProblems(w)).toEqual([]);
  });

  it('keeps the page lines: header first, then url, title, text and ts', async () => {
    const buf = await writeWacz({ exchanges, pages, software: 's', created: T0 });
    const w = await readWacz(buf);
    const raw = w.entries.get('pages/pages.jsonl')!.data.toString('utf8').split('\n');
    expect(JSON.parse(raw[0]!)).toMatchObject({ format: 'json-pages-1.0', id: 'pages' });
    expect(w.pages).toHaveLength(1);
    expect(w.pages[0]).toMatchObject({ url: 'http://127.0.0.2:8080/old', title: 'Hello', text: 'Hi there — ünïcødé 日本語', ts: '2024-05-01T12:34:56.789Z' });
    expect(w.pages[0]!.textWithheld).toBeUndefined();
  });

  it('keeps every one of many page lines, and textWithheld with an empty text', async () => {
    const many: WaczPage[] = Array.from({ length: 1200 }, (_, i) => ({
      url: `http://h/${i}`,
      title: `t${i}`,
      text: `body ${i}`,
      ts: new Date(T0.getTime() + i),
    }));
    many.push({ url: 'http://h/withheld', title: 'w', text: '', ts: T0, textWithheld: 'no-archive' });
    const w = await readWacz(await writeWacz({ exchanges: [], pages: many, software: 's', created: T0 }));
    expect(w.pages).toHaveLength(1201);
    expect(w.pages.map((p) => p.url)).toEqual(many.map((p) => p.url));
    expect(w.pages[777]).toMatchObject({ title: 't777', text: 'body 777' });
    expect(w.pages[1200]).toMatchObject({ url: 'http://h/withheld', text: '', textWithheld: 'no-archive' });
    expect(waczProblems(w)).toEqual([]);
  });

  it('writes warcinfo, then response and request per exchange, with digests and lengths that check', async () => {
    const w = await readWacz(await writeWacz({ exchanges, pages, software: 's', created: T0 }));
    expect(w.records.map((r) => [r.headers['WARC-Type'], r.headers['WARC-Target-URI']])).toEqual([
      ['warcinfo', undefined],
      ['response', 'http://127.0.0.2:8080/old'],
      ['request', 'http://127.0.0.2:8080/old'],
      ['response', 'http://127.0.0.2:8080/new?q=1'],
      ['request', 'http://127.0.0.2:8080/new?q=1'],
    ]);
    for (const r of w.records) {
      expect(Number(r.headers['Content-Length'])).toBe(r.block.length);
      expect(r.headers['WARC-Block-Digest']).toBe(`sha256:${sha256Hex(r.block)}`);
      expect(r.headers['WARC-Record-ID']).toMatch(/^<urn:uuid:[0-9a-f-]{36}>$/);
    }
    const res = w.records[3]!;
    const http = parseHttpResponse(res.block);
    expect(http.status).toBe(200);
    expect(http.body.toString('utf8')).toBe(html);
    expect(res.headers['WARC-Payload-Digest']).toBe(`sha256:${sha256Hex(html)}`);
    expect(res.headers['WARC-Date']).toBe(T0.toISOString());
    expect(res.headers['WARC-IP-Address']).toBe('127.0.0.2');
    expect(w.records[4]!.headers['WARC-Concurrent-To']).toBe(res.headers['WARC-Record-ID']);
    expect(w.records[4]!.block.toString('latin1')).toMatch(/^GET \/new\?q=1 HTTP\/1\.1\r\nHost: 127\.0\.0\.2:8080\r\n/);
    expect(parseHttpResponse(w.records[1]!.block).headers).toContainEqual(['Location', '/new']);
  });

  it('indexes each response record by the offset and length of its own gzip member, sorted', async () => {
    const w = await readWacz(await writeWacz({ exchanges, pages, software: 's', created: T0 }));
    expect(w.cdx.map((c) => [c.url, c.status, c.mime, c.timestamp])).toEqual([
      ['http://127.0.0.2:8080/new?q=1', '200', 'text/html', '20240501123456'],
      ['http://127.0.0.2:8080/old', '302', '', '20240501123456'],
    ]);
    const warc = w.entries.get(WARC_PATH)!.data;
    for (const c of w.cdx) {
      expect(c.filename).toBe('data.warc.gz');
      // the member alone inflates to exactly one whole record
      const rec = parseWarc(gunzipSync(warc.subarray(c.offset, c.offset + c.length)));
      expect(rec).toHaveLength(1);
      expect(rec[0]!.headers['WARC-Target-URI']).toBe(c.url);
      expect(c.digest).toBe(rec[0]!.headers['WARC-Payload-Digest']);
    }
  });

  it('signs datapackage.json anonymously when asked, and the signature verifies', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const w = await readWacz(await writeWacz({ exchanges, pages, software: 's', created: T0, signer: { privateKey, publicKey } }));
    expect(w.digest!.signedData).toMatchObject({ hash: w.digest!.hash, created: T0.toISOString(), software: 's' });
    expect(waczProblems(w)).toEqual([]);
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    expect(waczProblems({ ...w, digest: { ...w.digest!, signedData: { ...w.digest!.signedData!, publicKey: other } } })).toEqual(['signature does not verify']);
  });
});

describe('waczProblems finds what is wrong', () => {
  it('a file that does not match its hash and size', async () => {
    const good = await readWacz(await writeWacz({ exchanges, pages, software: 's', created: T0 }));
    const bad = await readWacz(
      await rezip(good.entries, (name, data) => ({ data: name === 'pages/pages.jsonl' ? Buffer.concat([data, Buffer.from('{"url":"http://x/"}\n')]) : data })),
    );
    expect(waczProblems(bad)).toEqual([expect.stringMatching(/^pages\/pages\.jsonl: hash/), expect.stringMatching(/^pages\/pages\.jsonl: bytes/)]);
  });
  it('a deflated WARC, a file not listed, a missing file, a digest that does not match', async () => {
    const good = await readWacz(await writeWacz({ exchanges, pages, software: 's', created: T0 }));
    const entries = new Map(good.entries);
    entries.set('extra.txt', { data: Buffer.from('x'), compressionMethod: 0, storedBytes: 1 });
    entries.delete('indexes/index.cdx');
    const bad = await readWacz(
      await rezip(entries, (name, data) =>
        name === WARC_PATH
          ? { data, compress: true }
          : name === 'datapackage-digest.json'
            ? { data: Buffer.from('{"path":"datapackage.json","hash":"sha256:00"}') }
            : { data },
      ),
    );
    expect(waczProblems(bad).sort()).toEqual(
      [
        'archive/data.warc.gz is deflated; WARCs and compressed indexes must be stored',
        'datapackage-digest.json does not match datapackage.json',
        'extra.txt is not listed in datapackage.json',
        'indexes/index.cdx is listed in datapackage.json but missing',
      ].sort(),
    );
  });
  it('a CDX line pointing at the wrong bytes', async () => {
    const good = await readWacz(await writeWacz({ exchanges, pages, software: 's', created: T0 }));
    expect(waczProblems({ ...good, cdx: good.cdx.map((c) => ({ ...c, offset: c.offset + 1 })) })).toHaveLength(2);
  });
  it('readWacz refuses a zip without datapackage.json or pages.jsonl', async () => {
    const good = await readWacz(await writeWacz({ exchanges, pages, software: 's', created: T0 }));
    const noPages = new Map(good.entries);
    noPages.delete('pages/pages.jsonl');
    await expect(readWacz(await rezip(noPages, (_n, data) => ({ data })))).rejects.toThrow(/pages\.jsonl/);
    const noDp = new Map(good.entries);
    noDp.delete('datapackage.json');
    await expect(readWacz(await rezip(noDp, (_n, data) => ({ data })))).rejects.toThrow(/datapackage\.json/);
    await expect(unzip(Buffer.from('not a zip'))).rejects.toThrow();
  });
});

describe('WARC records', () => {
  it('refuses malformed input', () => {
    expect(() => parseWarc(Buffer.from('HTTP/1.1 200 OK\r\n\r\n'))).toThrow(/version line/);
    expect(() => parseWarc(Buffer.from('WARC/1.1\r\nContent-Length: 10\r\n\r\nabc\r\n\r\n'))).toThrow(/Content-Length/);
    expect(() => parseWarc(Buffer.from('WARC/1.1\r\nContent-Length: x\r\n\r\n'))).toThrow(/bad Content-Length/);
  });
  it('refuses a header with a line break (no header injection from a server)', () => {
    const x = exchange('http://h/', 200, 'x', [['X-Evil', 'a\r\nWARC-Type: forged']]);
    expect(() => exchangeRecords(x)).toThrow(/line break/);
  });
  it('keeps the response head as it came: repeated names in their order and case, a latin1 byte as one byte', () => {
    // Node's rawHeaders: one latin1 char per byte on the wire (warcio.js regroups the repeats and writes é as two UTF-8 bytes)
    const wire: [string, string][] = [
      ['Set-Cookie', 'a=1'],
      ['Content-Type', 'text/html'],
      ['set-cookie', 'b=2'],
      ['Set-Cookie', 'c=3'],
      ['X-Name', 'caf\u00e9'],
    ];
    const block = exchangeRecords(exchange('http://h/', 200, '', wire)).response.block;
    const head = `HTTP/1.1 200 OK\r\n${wire.map(([k, v]) => `${k}: ${v}\r\n`).join('')}Content-Length: 0\r\n\r\n`;
    expect(block.equals(Buffer.from(head, 'latin1'))).toBe(true);
    expect(block.includes(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0d]))).toBe(true);
  });
  it('serializes with Content-Length of the block and two CRLFs after it', () => {
    const b = serializeRecord({ headers: { 'WARC-Type': 'resource' }, block: Buffer.from('abc') });
    expect(b.toString()).toBe('WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n');
  });
});

describe('CDXJ', () => {
  it('builds SURT keys', () => {
    expect(surt('https://www.Example.com/A?b=1')).toBe('com,example)/a?b=1');
    expect(surt('http://sub.example.co.uk:8080/')).toBe('uk,co,example,sub:8080)/');
    expect(surt('http://127.0.0.2:4000/x')).toBe('2,0,0,127:4000)/x');
  });
  it('formats 14-digit UTC timestamps', () => {
    expect(cdxTimestamp(new Date('2024-01-02T03:04:05.999Z'))).toBe('20240102030405');
  });
  it('round-trips lines, sorted', () => {
    const e = {
      url: 'http://b/',
      timestamp: '20240101000000',
      mime: 'text/html',
      status: '200',
      digest: 'sha256:ab',
      length: 10,
      offset: 5,
      filename: 'data.warc',
    };
    const text = formatCdxj([e, { ...e, url: 'http://a/' }]);
    expect(text.split('\n')[0]!.startsWith('a)/ ')).toBe(true);
    expect(parseCdxj(text)).toEqual([{ ...e, url: 'http://a/' }, e]);
    expect(formatCdxj([])).toBe('');
    expect(() => parseCdxj('a)/ 2024 {}')).toThrow(/timestamp/);
  });
});

describe('WACZ properties (fast-check)', () => {
  it('any titles and texts come back exactly, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ path: fc.webPath(), title: fc.option(fc.string({ unit: 'binary' }), { nil: undefined }), text: fc.string({ unit: 'binary' }) }), {
          minLength: 0,
          maxLength: 30,
        }),
        async (ps) => {
          const input: WaczPage[] = ps.map((p, i) => ({
            url: `http://h${i}.test${p.path.startsWith('/') ? '' : '/'}${encodeURI(p.path)}`,
            title: p.title,
            text: p.text,
            ts: T0,
          }));
          const w = await readWacz(await writeWacz({ exchanges: [], pages: input, software: 's', created: T0 }));
          expect(w.pages.map((p) => ({ url: p.url, title: p.title, text: p.text }))).toEqual(input.map((p) => ({ url: p.url, title: p.title, text: p.text })));
          expect(waczProblems(w)).toEqual([]);
        },
      ),
      { numRuns: 60 },
    );
  });
});
