// WARC/1.1 records (ISO 28500:2017): what a WACZ keeps under archive/, each record its own gzip
// member (warc-gzip.ts) in archive/data.warc.gz. Pure: bytes in, bytes out. Only what the capture
// flow writes and its tests read back: warcinfo, request, response and revisit records, with sha256 block and payload digests, and for an https response a metadata
// record with the TLS session and the certificate chain the server presented.
// Written here rather than with warcio.js's WARCRecord/WARCSerializer: given the same exchange,
// warcio groups a repeated header with its first occurrence (Set-Cookie a, Content-Type,
// set-cookie b, Set-Cookie c comes out a, c, Content-Type, b) and writes a header's latin1 byte
// 0xE9 as UTF-8 C3 A9, so the record would no longer be what came over the wire. The tests read
// what is written here back with warcio (test/support/warcio.ts).
import { createHash, randomUUID } from 'node:crypto';
import { gzipMembers, readGzipMember } from './warc-gzip.ts';

export type HeaderList = [string, string][];

/** The WARC file of a WACZ written here (under archive/), and the name its records and index give it. */
export const WARC_FILENAME = 'data.warc.gz';

export interface HttpRequestPart {
  method: string;
  /** origin-form target: path and query */
  target: string;
  httpVersion: string;
  headers: HeaderList;
}

export interface HttpResponsePart {
  status: number;
  statusText: string;
  httpVersion: string;
  headers: HeaderList;
  /** the payload exactly as received (no content-encoding asked for, none undone) */
  body: Buffer;
}

/** The TLS session an https exchange went over. */
export interface TlsSession {
  /** e.g. TLSv1.3 */
  protocol: string;
  /** IANA name, e.g. TLS_AES_256_GCM_SHA384 */
  cipher: string;
  /** DER, the server's own certificate first, then each issuer it sent */
  certificates: Buffer[];
}

/** One request and the response it got: one hop of a capture (a redirect is its own exchange). */
export interface HttpExchange {
  url: string;
  date: Date;
  request: HttpRequestPart;
  response: HttpResponsePart;
  /** the address actually connected to (WARC-IP-Address) */
  ip?: string;
  tls?: TlsSession;
}

export interface WarcRecord {
  headers: Record<string, string>;
  block: Buffer;
}

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

const CRLF = '\r\n';

function checkHeader(name: string, value: string): void {
  if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) throw new Error(`WARC/HTTP header ${JSON.stringify(name)} contains a line break`);
}

function headerLines(headers: HeaderList): string {
  return headers
    .map(([k, v]) => {
      checkHeader(k, v);
      return `${k}: ${v}${CRLF}`;
    })
    .join('');
}

export function httpRequestBlock(r: HttpRequestPart): Buffer {
  return Buffer.from(`${r.method} ${r.target} HTTP/${r.httpVersion}${CRLF}${headerLines(r.headers)}${CRLF}`, 'latin1');
}

export function httpResponseHead(r: HttpResponsePart): Buffer {
  return Buffer.from(`HTTP/${r.httpVersion} ${r.status} ${r.statusText}${CRLF}${headerLines(r.headers)}${CRLF}`, 'latin1');
}

/** The two CRLFs after a record's block: not part of its length in a CDX line (warcio and cdxj-indexer leave them out). */
export const RECORD_TRAILER_BYTES = 4;

/** Serialises one record: version line, named fields, blank line, block, two CRLFs. */
export function serializeRecord(rec: WarcRecord): Buffer {
  const fields = { ...rec.headers, 'Content-Length': String(rec.block.length) };
  let head = `WARC/1.1${CRLF}`;
  for (const [k, v] of Object.entries(fields)) {
    checkHeader(k, v);
    head += `${k}: ${v}${CRLF}`;
  }
  return Buffer.concat([Buffer.from(head + CRLF, 'utf8'), rec.block, Buffer.from(CRLF + CRLF)]);
}

export function warcDate(d: Date): string {
  return d.toISOString();
}

const recordId = (): string => `<urn:uuid:${randomUUID()}>`;

/** An application/warc-fields block: `name: value` lines; a name may repeat. */
export function warcFields(fields: HeaderList): Buffer {
  return Buffer.from(headerLines(fields), 'utf8');
}

export function warcinfoRecord(date: Date, fields: HeaderList): WarcRecord {
  const block = warcFields(fields);
  return {
    headers: {
      'WARC-Type': 'warcinfo',
      'WARC-Record-ID': recordId(),
      'WARC-Date': warcDate(date),
      'WARC-Filename': WARC_FILENAME,
      'Content-Type': 'application/warc-fields',
      'WARC-Block-Digest': `sha256:${sha256Hex(block)}`,
    },
    block,
  };
}

/** The TLS session of an https response, as a metadata record about it (indexers skip warc-fields metadata). */
export function tlsRecord(x: HttpExchange & { tls: TlsSession }, responseId: string): WarcRecord {
  const block = warcFields([
    ['tls-protocol', x.tls.protocol],
    ['tls-cipher', x.tls.cipher],
    ...x.tls.certificates.map((c): [string, string] => ['peer-certificate', c.toString('base64')]),
  ]);
  return {
    headers: {
      'WARC-Type': 'metadata',
      'WARC-Record-ID': recordId(),
      'WARC-Date': warcDate(x.date),
      'WARC-Target-URI': x.url,
      'WARC-Concurrent-To': responseId,
      'Content-Type': 'application/warc-fields',
      'WARC-Block-Digest': `sha256:${sha256Hex(block)}`,
    },
    block,
  };
}

/** The response record first (replay looks it up), then the request that produced it, then its TLS session if any. */
export function exchangeRecords(x: HttpExchange): { response: WarcRecord; request: WarcRecord; tls?: WarcRecord } {
  const responseId = recordId();
  const head = httpResponseHead(x.response);
  const responseBlock = Buffer.concat([head, x.response.body]);
  const ip: Record<string, string> = x.ip !== undefined ? { 'WARC-IP-Address': x.ip } : {};
  const response: WarcRecord = {
    headers: {
      'WARC-Type': 'response',
      'WARC-Record-ID': responseId,
      'WARC-Date': warcDate(x.date),
      'WARC-Target-URI': x.url,
      ...ip,
      'Content-Type': 'application/http; msgtype=response',
      'WARC-Payload-Digest': `sha256:${sha256Hex(x.response.body)}`,
      'WARC-Block-Digest': `sha256:${sha256Hex(responseBlock)}`,
    },
    block: responseBlock,
  };
  const requestBlock = httpRequestBlock(x.request);
  const request: WarcRecord = {
    headers: {
      'WARC-Type': 'request',
      'WARC-Record-ID': recordId(),
      'WARC-Date': warcDate(x.date),
      'WARC-Target-URI': x.url,
      'WARC-Concurrent-To': responseId,
      'Content-Type': 'application/http; msgtype=request',
      'WARC-Block-Digest': `sha256:${sha256Hex(requestBlock)}`,
    },
    block: requestBlock,
  };
  return { response, request, ...(x.tls !== undefined ? { tls: tlsRecord({ ...x, tls: x.tls }, responseId) } : {}) };
}

/** What a revisit refers to: the response record that holds the payload in full (identical-payload-digest). */
export interface RevisitTarget {
  profile: string;
  uri: string;
  /** the referred record's WARC-Date */
  date: string;
}

/**
 * A response whose payload is stored elsewhere: a revisit record whose block is the HTTP head only
 * (WARC 1.1 §6.7.2), with the payload's digest and the record it refers to, then what else the
 * exchange needs. Its WARC fields are the ones a reader uses: no WARC-Block-Digest (optional in
 * WARC 1.1; the head it would cover is short, and the payload digest is what identifies the
 * revisit). A GET revisit is written alone: its request record and TLS session would be the same
 * fetch again, kept beside the original, and no replay reads a GET's request (pywb and
 * ReplayWeb.page look a GET up by URL and time; they read a request record for a POST's body).
 * Any other method keeps its request, which replay needs to match the body.
 */
export function revisitRecords(x: HttpExchange, target: RevisitTarget): { response: WarcRecord; request?: WarcRecord; tls?: WarcRecord } {
  const full = exchangeRecords(x);
  const response: WarcRecord = {
    headers: {
      'WARC-Type': 'revisit',
      'WARC-Record-ID': full.response.headers['WARC-Record-ID']!,
      'WARC-Date': warcDate(x.date),
      'WARC-Target-URI': x.url,
      ...(x.ip !== undefined ? { 'WARC-IP-Address': x.ip } : {}),
      'WARC-Profile': target.profile,
      'WARC-Refers-To-Target-URI': target.uri,
      'WARC-Refers-To-Date': target.date,
      'Content-Type': 'application/http; msgtype=response',
      'WARC-Payload-Digest': full.response.headers['WARC-Payload-Digest']!,
    },
    block: httpResponseHead(x.response),
  };
  if (x.request.method.toUpperCase() === 'GET') return { response };
  return { ...full, response };
}

export interface ParsedRecord extends WarcRecord {
  /** byte offset of the record in the WARC file, and its full length including the trailing CRLFs
   * (in a .warc.gz: of its gzip member) */
  offset: number;
  length: number;
}

/** Reads every record of an uncompressed WARC; throws on anything malformed. */
export function parseWarc(buf: Buffer): ParsedRecord[] {
  const out: ParsedRecord[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const headEnd = buf.indexOf('\r\n\r\n', pos, 'latin1');
    if (headEnd < 0) throw new Error(`WARC record at ${pos}: no end of headers`);
    const lines = buf.subarray(pos, headEnd).toString('utf8').split('\r\n');
    if (!/^WARC\/1\.[01]$/.test(lines[0] ?? '')) throw new Error(`WARC record at ${pos}: bad version line ${JSON.stringify(lines[0])}`);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      if (i <= 0) throw new Error(`WARC record at ${pos}: bad header line ${JSON.stringify(line)}`);
      headers[line.slice(0, i).trim()] = line.slice(i + 1).trim();
    }
    const len = Number(headers['Content-Length']);
    if (!Number.isInteger(len) || len < 0) throw new Error(`WARC record at ${pos}: bad Content-Length`);
    const blockStart = headEnd + 4;
    const blockEnd = blockStart + len;
    if (blockEnd + 4 > buf.length || buf.toString('latin1', blockEnd, blockEnd + 4) !== '\r\n\r\n')
      throw new Error(`WARC record at ${pos}: block does not end where Content-Length says`);
    out.push({ headers, block: buf.subarray(blockStart, blockEnd), offset: pos, length: blockEnd + 4 - pos });
    pos = blockEnd + 4;
  }
  return out;
}

/** Splits an HTTP response block into status, headers and payload. */
export function parseHttpResponse(block: Buffer): { status: number; headers: HeaderList; body: Buffer } {
  const end = block.indexOf('\r\n\r\n', 0, 'latin1');
  if (end < 0) throw new Error('HTTP response block has no end of headers');
  const lines = block.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(lines[0] ?? '');
  if (!m) throw new Error(`bad HTTP status line ${JSON.stringify(lines[0])}`);
  const headers: HeaderList = lines.slice(1).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).trim(), l.slice(i + 1).trim()];
  });
  return { status: Number(m[1]), headers, body: block.subarray(end + 4) };
}

/** The one record a gzip member of a .warc.gz holds, at the member's offset and length. */
function memberRecord(m: { offset: number; length: number; data: Buffer }): ParsedRecord {
  const recs = parseWarc(m.data);
  if (recs.length !== 1) throw new Error(`WARC gzip member at ${m.offset}: holds ${recs.length} records, not one`);
  return { ...recs[0]!, offset: m.offset, length: m.length };
}

/** Reads every record of a record-at-a-time gzipped WARC; throws on anything malformed. */
export function parseWarcGz(buf: Buffer): ParsedRecord[] {
  return gzipMembers(buf).map(memberRecord);
}

/** The record of the gzip member at `offset`, which must be `length` bytes long (a CDX line's pointer). */
export function warcGzRecordAt(buf: Buffer, offset: number, length: number): ParsedRecord {
  const m = readGzipMember(buf.subarray(0, offset + length), offset);
  if (m.length !== length) throw new Error(`WARC gzip member at ${offset} is ${m.length} bytes, not ${length}`);
  return memberRecord(m);
}

/** Reads a WARC file as its name says it is written: `.warc.gz` record-at-a-time gzip, else plain. */
export function parseWarcFile(name: string, buf: Buffer): ParsedRecord[] {
  return name.endsWith('.gz') ? parseWarcGz(buf) : parseWarc(buf);
}
