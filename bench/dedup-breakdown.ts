// Where a crawl's WACZ bytes go (issue 26): the bytes each part of the archives takes in the
// object store, per page. A WARC record's stored bytes are its gzip member (or, in an uncompressed
// WARC, the record itself); its raw bytes are split into WARC header, HTTP header and payload, so
// a compressed record's figure says what it holds as well as what it costs. The zip's own
// headers (local headers, central directory, end record) are what is left of the file.
import { readWacz, type ZipEntryData } from '../src/domain/wacz/read.ts';
import type { ParsedRecord } from '../src/domain/wacz/warc.ts';

export interface RecordPart {
  records: number;
  /** bytes in the store: the record's gzip member, or the record itself when the WARC is not compressed */
  stored: number;
  /** uncompressed: the WARC version line and named fields, the HTTP head, the payload */
  warcHeaders: number;
  httpHeaders: number;
  payload: number;
}

export interface Breakdown {
  /** WARC records by WARC-Type */
  records: Record<string, RecordPart>;
  /** each zip entry other than the WARCs, keyed by its path: its bytes in the store, and uncompressed */
  entries: Record<string, { stored: number; raw: number }>;
  /** local headers, central directory, end record */
  zipOverhead: number;
  total: number;
}

const CRLF = 2;

function warcHeaderBytes(r: ParsedRecord): number {
  const fields = Object.entries(r.headers).reduce((n, [k, v]) => n + Buffer.byteLength(`${k}: ${v}`) + CRLF, 0);
  // version line, fields, blank line, and the two CRLFs after the block
  return 'WARC/1.1'.length + CRLF + fields + CRLF + 2 * CRLF;
}

function httpSplit(r: ParsedRecord): { httpHeaders: number; payload: number } {
  const type = r.headers['WARC-Type'];
  if (type === 'request') return { httpHeaders: r.block.length, payload: 0 };
  if (type !== 'response' && type !== 'revisit') return { httpHeaders: 0, payload: r.block.length };
  const end = r.block.indexOf('\r\n\r\n', 0, 'latin1');
  const head = end < 0 ? r.block.length : end + 4;
  return { httpHeaders: head, payload: r.block.length - head };
}

function addRecord(into: Record<string, RecordPart>, r: ParsedRecord): void {
  const type = r.headers['WARC-Type'] ?? 'unknown';
  const part = (into[type] ??= { records: 0, stored: 0, warcHeaders: 0, httpHeaders: 0, payload: 0 });
  const { httpHeaders, payload } = httpSplit(r);
  part.records += 1;
  part.stored += r.length;
  part.warcHeaders += warcHeaderBytes(r);
  part.httpHeaders += httpHeaders;
  part.payload += payload;
}

const isWarc = (name: string): boolean => name.startsWith('archive/');

function addEntries(into: Breakdown['entries'], entries: Map<string, ZipEntryData>): number {
  let stored = 0;
  for (const [name, e] of entries) {
    stored += e.storedBytes;
    if (isWarc(name)) continue;
    const sum = (into[name] ??= { stored: 0, raw: 0 });
    sum.stored += e.storedBytes;
    sum.raw += e.data.length;
  }
  return stored;
}

export async function breakdown(waczs: Iterable<Buffer>): Promise<Breakdown> {
  const out: Breakdown = { records: {}, entries: {}, zipOverhead: 0, total: 0 };
  for (const buf of waczs) {
    const w = await readWacz(buf);
    for (const r of w.records) addRecord(out.records, r);
    out.zipOverhead += buf.length - addEntries(out.entries, w.entries);
    out.total += buf.length;
  }
  return out;
}

/** The same figures divided by the page count, rounded to whole bytes. */
export function perPage(b: Breakdown, pages: number): Breakdown {
  const div = (n: number): number => Math.round(n / pages);
  const records = Object.fromEntries(
    Object.entries(b.records).map(([k, p]) => [
      k,
      {
        records: Number((p.records / pages).toFixed(2)),
        stored: div(p.stored),
        warcHeaders: div(p.warcHeaders),
        httpHeaders: div(p.httpHeaders),
        payload: div(p.payload),
      },
    ]),
  );
  const entries = Object.fromEntries(Object.entries(b.entries).map(([k, n]) => [k, { stored: div(n.stored), raw: div(n.raw) }]));
  return { records, entries, zipOverhead: div(b.zipOverhead), total: div(b.total) };
}
