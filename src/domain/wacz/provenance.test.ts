// How a WACZ says it was made, read back with warcio.js (a second reader, the one replay engines
// use): the warcinfo record's fields, WARC-IP-Address on every response, the TLS metadata record of
// an https response, and datapackage.json's software, created and title.
import { describe, expect, it } from 'vitest';
import { okExchange } from '../../../test/support/wacz.ts';
import { readWithWarcio, warcFieldsOf, warcioIndex } from '../../../test/support/warcio.ts';
import { readWacz } from './read.ts';
import type { HttpExchange } from './warc.ts';
import { WARC_PATH, writeWacz, type Provenance } from './write.ts';

const T0 = new Date('2024-05-01T12:34:56.789Z');
const provenance: Provenance = {
  browser: 'Chromium 141.0.7390.54',
  userAgent: 'capture-ledger-flow/0.1.0 (+https://example.test/bot)',
  worker: 'flow@host-7 (pid 4242)',
  settings: { formats: ['wacz', 'png'], maxDepth: 2, note: 'two\nlines' },
  robots: 'allowed by http://127.0.0.2:8080/robots.txt',
};

function hit(url: string, ip: string, tls?: HttpExchange['tls']): HttpExchange {
  return okExchange(url, Buffer.from(`<title>${url}</title>`), { date: T0, ip, ...(tls !== undefined ? { tls } : {}) });
}

const session = {
  protocol: 'TLSv1.3',
  cipher: 'TLS_AES_128_GCM_SHA256',
  certificates: [Buffer.from('leaf certificate DER'), Buffer.from('issuer certificate DER')],
};
const exchanges = [hit('http://127.0.0.2:8080/', '127.0.0.2'), hit('https://127.0.0.3:8443/s', '127.0.0.3', session), hit('http://[::1]:8080/six', '::1')];
const page = { url: 'http://127.0.0.2:8080/', title: 'Home', text: 'hi', ts: T0 };

async function warcOf(input: Parameters<typeof writeWacz>[0]): Promise<Buffer> {
  return (await readWacz(await writeWacz(input))).entries.get(WARC_PATH)!.data;
}

describe('provenance, read back with warcio', () => {
  it('the first record is a warcinfo naming software, browser, user agent, worker, settings and robots', async () => {
    const records = await readWithWarcio(await warcOf({ exchanges, pages: [page], software: 'capture-ledger-flow/0.1.0', provenance, created: T0 }));
    expect(records[0]!.type).toBe('warcinfo');
    const fields = new Map(warcFieldsOf(records[0]!.content));
    expect(fields.get('software')).toBe('capture-ledger-flow/0.1.0');
    expect(fields.get('browser')).toBe('Chromium 141.0.7390.54');
    expect(fields.get('http-header-user-agent')).toBe(provenance.userAgent);
    expect(fields.get('capture-worker')).toBe('flow@host-7 (pid 4242)');
    expect(JSON.parse(fields.get('crawl-settings')!)).toEqual(provenance.settings);
    expect(fields.get('robots')).toBe(provenance.robots);
    expect(fields.get('format')).toBe('WARC File Format 1.1');
    expect(records.filter((r) => r.type === 'warcinfo')).toHaveLength(1);
  });

  it('without provenance the warcinfo still names the software, and nothing it does not know', async () => {
    const records = await readWithWarcio(await warcOf({ exchanges, pages: [page], software: 'sw/1', created: T0 }));
    expect(warcFieldsOf(records[0]!.content).map(([k]) => k)).toEqual(['software', 'format', 'conformsTo']);
  });

  it('every response carries the address it came from', async () => {
    const records = await readWithWarcio(await warcOf({ exchanges, pages: [page], software: 's', created: T0 }));
    const responses = records.filter((r) => r.type === 'response');
    expect(responses.map((r) => [r.uri, r.header('WARC-IP-Address'), r.status])).toEqual([
      ['http://127.0.0.2:8080/', '127.0.0.2', 200],
      ['https://127.0.0.3:8443/s', '127.0.0.3', 200],
      ['http://[::1]:8080/six', '::1', 200],
    ]);
  });

  it('an https response is followed by a metadata record of its TLS session and certificate chain', async () => {
    const records = await readWithWarcio(await warcOf({ exchanges, pages: [page], software: 's', created: T0 }));
    const meta = records.filter((r) => r.type === 'metadata');
    expect(meta).toHaveLength(1);
    const response = records.find((r) => r.uri === 'https://127.0.0.3:8443/s' && r.type === 'response')!;
    expect(meta[0]!.uri).toBe('https://127.0.0.3:8443/s');
    expect(meta[0]!.header('WARC-Concurrent-To')).toBe(response.header('WARC-Record-ID'));
    expect(meta[0]!.header('Content-Type')).toBe('application/warc-fields');
    const fields = warcFieldsOf(meta[0]!.content);
    expect(fields.filter(([k]) => k !== 'peer-certificate')).toEqual([
      ['tls-protocol', 'TLSv1.3'],
      ['tls-cipher', 'TLS_AES_128_GCM_SHA256'],
    ]);
    expect(fields.filter(([k]) => k === 'peer-certificate').map(([, v]) => Buffer.from(v, 'base64').toString())).toEqual([
      'leaf certificate DER',
      'issuer certificate DER',
    ]);
  });

  it('warcio finds each response at the offset and length our CDXJ gives it, and nothing else to index', async () => {
    const w = await readWacz(await writeWacz({ exchanges, pages: [page], software: 's', created: T0 }));
    const theirs = await warcioIndex(w.entries.get(WARC_PATH)!.data, 'data.warc.gz');
    const ours = w.cdx.map((c) => ({ url: c.url, status: c.status, mime: c.mime, offset: c.offset, length: c.length }));
    const byOffset = (a: { offset: number }, b: { offset: number }): number => a.offset - b.offset;
    expect(ours.sort(byOffset)).toEqual(theirs.sort(byOffset));
    expect(ours).toHaveLength(3);
  });
});

describe('datapackage.json', () => {
  it('has software, created and the title given', async () => {
    const w = await readWacz(await writeWacz({ exchanges, pages: [page], software: 'sw/1', created: T0, title: 'A crawl' }));
    expect(w.datapackage).toMatchObject({ software: 'sw/1', created: T0.toISOString(), title: 'A crawl' });
  });

  it('takes the main page title, or its URL when it has none, when no title is given', async () => {
    expect((await readWacz(await writeWacz({ exchanges, pages: [page], software: 's', created: T0 }))).datapackage.title).toBe('Home');
    const untitled = { url: page.url, ts: T0 };
    expect((await readWacz(await writeWacz({ exchanges, pages: [untitled], software: 's', created: T0 }))).datapackage.title).toBe(page.url);
  });
});
