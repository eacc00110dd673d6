// Writes a WACZ 1.1.1 (https://specs.webrecorder.net/wacz/1.1.1/) in memory:
//   archive/data.warc.gz     WARC records, one gzip member each, stored (not deflated again) so
//                            replay can range-read a record by its CDXJ offset and length
//   indexes/index.cdx        CDXJ over the response records, deflated (the spec allows it for
//                            .cdx; replay reads a small index whole)
//   pages/pages.jsonl        a header line, then {id, url, title, text, ts[, textWithheld]} per page
//   datapackage.json         every file above with its sha256 and size
//   datapackage-digest.json  the sha256 of datapackage.json, optionally signed (wacz-auth, anonymous)
// Pure apart from building the zip in memory: no files, no network.
import { createHash, sign, type KeyObject } from 'node:crypto';
import yazl from 'yazl';
import { formatPagesJsonl, type PageEntry } from '../pages-jsonl.ts';
import { cdxTimestamp, formatCdxj, type CdxEntry } from './cdx.ts';
import { planRecords, requiredArchives, REVISIT_PROFILE, storedPayloads, type RecordPlan, type StoredPayload } from './dedup.ts';
import {
  exchangeRecords,
  revisitRecords,
  serializeRecord,
  sha256Hex,
  WARC_FILENAME,
  warcinfoRecord,
  type HeaderList,
  type HttpExchange,
  type WarcRecord,
} from './warc.ts';
import { gzipMember } from './warc-gzip.ts';

export const WACZ_VERSION = '1.1.1';
/** zlib's smallest output for the deflated zip entries (yazl's default is 6) */
const ZIP_DEFLATE_LEVEL = 9;
export const WARC_PATH = `archive/${WARC_FILENAME}`;
export const PAGES_HEADER = { format: 'json-pages-1.0', id: 'pages', title: 'All Pages', hasText: true } as const;

/** BrowserHive's DocumentWithheld: why a page's text (and document) was not kept. */
export type TextWithheld = 'url-policy' | 'content-type' | 'no-archive' | 'deny' | 'unattributed';

export interface WaczPage {
  url: string;
  title?: string;
  /** the rendered body text (document.body.innerText); empty when withheld */
  text?: string;
  ts: Date;
  textWithheld?: TextWithheld;
}

/** A pages.jsonl line as this writer writes it. */
export interface WaczPageLine extends PageEntry {
  textWithheld?: TextWithheld;
}

export interface WaczSigner {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** How a capture was made, as the warcinfo record says it. */
export interface Provenance {
  /** the browser that loaded the page, e.g. "Chromium 141.0.7390.54" */
  browser?: string;
  userAgent?: string;
  /** the capture worker that made it */
  worker?: string;
  /** the crawl's settings as the capture knew them */
  settings?: Record<string, unknown>;
  /** what robots.txt decided for the page */
  robots?: string;
}

export interface WaczInput {
  exchanges: HttpExchange[];
  pages: WaczPage[];
  /** name/version */
  software: string;
  provenance?: Provenance;
  created?: Date;
  /** datapackage.json's title; the main page's title or URL when not given */
  title?: string;
  /** anonymous wacz-auth signature over datapackage.json's hash (ECDSA P-256, SHA-256) */
  signer?: WaczSigner;
  /** payloads earlier captures of the crawl stored, and this WACZ's own key: a response with one
   * of those payloads is written as a revisit of it */
  dedup?: { known: readonly StoredPayload[]; archiveKey: string };
}

export interface DataPackageResource {
  name: string;
  path: string;
  hash: string;
  bytes: number;
}

export interface DataPackage {
  profile: 'data-package';
  wacz_version: string;
  title: string;
  created: string;
  modified?: string;
  software: string;
  mainPageUrl?: string;
  mainPageDate?: string;
  resources: DataPackageResource[];
  /** the object keys (same bucket) of the WACZ files this one's revisit records refer to: replay
   * needs them loaded beside it. Keys, not ledger ids: the capture writes before the ledger
   * assigns ids, and a key is derived from the task, the same on every attempt. */
  requires?: string[];
}

export interface SignedData {
  hash: string;
  created: string;
  software: string;
  signature: string;
  publicKey: string;
}

export interface DataPackageDigest {
  path: 'datapackage.json';
  hash: string;
  signedData?: SignedData;
}

function mimeOf(headers: [string, string][]): string {
  const ct = headers.find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '';
  return ct.split(';')[0]!.trim().toLowerCase();
}

/** The warcinfo fields (WARC 1.1 annex names where it has one): software first, then what made the capture. */
export function warcinfoFields(software: string, p: Provenance = {}): HeaderList {
  const fields: HeaderList = [['software', software]];
  if (p.browser !== undefined) fields.push(['browser', p.browser]);
  if (p.userAgent !== undefined) fields.push(['http-header-user-agent', p.userAgent]);
  if (p.worker !== undefined) fields.push(['capture-worker', p.worker]);
  // one line: JSON.stringify escapes line breaks inside strings
  if (p.settings !== undefined) fields.push(['crawl-settings', JSON.stringify(p.settings)]);
  if (p.robots !== undefined) fields.push(['robots', p.robots]);
  fields.push(['format', 'WARC File Format 1.1'], ['conformsTo', 'https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/']);
  return fields;
}

/** How one exchange is written: its response (or revisit) record, then the rest. */
function recordsOf(x: HttpExchange, p: RecordPlan | undefined): { response: WarcRecord; rest: WarcRecord[] } {
  const { response, request, tls } =
    p?.kind === 'revisit' ? revisitRecords(x, { profile: REVISIT_PROFILE, uri: p.of.uri, date: p.of.date }) : exchangeRecords(x);
  return { response, rest: [...(request !== undefined ? [request] : []), ...(tls !== undefined ? [tls] : [])] };
}

/** A response's CDXJ line, pointing at its gzip member. */
function cdxEntryOf(x: HttpExchange, p: RecordPlan | undefined, response: WarcRecord, offset: number, length: number): CdxEntry {
  return {
    url: x.url,
    timestamp: cdxTimestamp(x.date),
    // as pywb and cdxj-indexer index a revisit
    mime: p?.kind === 'revisit' ? 'warc/revisit' : mimeOf(x.response.headers),
    status: String(x.response.status),
    digest: response.headers['WARC-Payload-Digest']!,
    length,
    offset,
    filename: WARC_FILENAME,
  };
}

const member = (r: WarcRecord): Buffer => gzipMember(serializeRecord(r));

/**
 * The WARC (each record its own gzip member) and its CDXJ index for a list of exchanges, each
 * written as `plan` says (in full by default). A CDXJ line's offset and length are its member's.
 */
export function buildWarc(exchanges: HttpExchange[], info: HeaderList, created: Date, plan: readonly RecordPlan[] = []): { warc: Buffer; cdx: string } {
  const members: Buffer[] = [member(warcinfoRecord(created, info))];
  let offset = members[0]!.length;
  const entries: CdxEntry[] = [];
  for (const [i, x] of exchanges.entries()) {
    const { response, rest } = recordsOf(x, plan[i]);
    const written = [response, ...rest].map(member);
    entries.push(cdxEntryOf(x, plan[i], response, offset, written[0]!.length));
    members.push(...written);
    offset += written.reduce((n, b) => n + b.length, 0);
  }
  return { warc: Buffer.concat(members), cdx: formatCdxj(entries) };
}

export function pageLines(pages: WaczPage[]): string {
  const lines: WaczPageLine[] = pages.map((p) => {
    const ts = p.ts.toISOString();
    const line: WaczPageLine = { id: createHash('sha256').update(`${ts} ${p.url}`).digest('hex').slice(0, 32), url: p.url, ts };
    if (p.title !== undefined) line.title = p.title;
    line.text = p.text ?? '';
    if (p.textWithheld !== undefined) line.textWithheld = p.textWithheld;
    return line;
  });
  return formatPagesJsonl(lines, { ...PAGES_HEADER });
}

/** Anonymous wacz-auth signature: ECDSA (SHA-256) over the UTF-8 hash string, IEEE P1363, base64. */
export function signHash(hash: string, signer: WaczSigner, software: string, created: Date): SignedData {
  const signature = sign('sha256', Buffer.from(hash, 'utf8'), { key: signer.privateKey, dsaEncoding: 'ieee-p1363' });
  const publicKey = signer.publicKey.export({ type: 'spki', format: 'der' });
  return { hash, created: created.toISOString(), software, signature: signature.toString('base64'), publicKey: publicKey.toString('base64') };
}

function zip(entries: { name: string; data: Buffer; compress: boolean }[], mtime: Date): Promise<Buffer> {
  const z = new yazl.ZipFile();
  // DOS timestamps only: the extended-timestamp extra field adds 9 bytes per header, and
  // datapackage.json already says when the WACZ was made
  for (const e of entries) z.addBuffer(e.data, e.name, { compressionLevel: e.compress ? ZIP_DEFLATE_LEVEL : 0, mtime, forceDosTimestamp: true });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    z.outputStream.on('data', (c: Buffer) => chunks.push(c));
    z.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    z.outputStream.on('error', reject);
  });
  z.end();
  return done;
}

/** A written WACZ and what its dedup came to: the archives it requires, the payloads it stored in full (for later captures), the digests it revisited. */
export interface PackedWacz {
  wacz: Buffer;
  requires: string[];
  stored: StoredPayload[];
  revisited: string[];
}

export async function writeWacz(input: WaczInput): Promise<Buffer> {
  return (await packWacz(input)).wacz;
}

export async function packWacz(input: WaczInput): Promise<PackedWacz> {
  const created = input.created ?? new Date();
  const ownKey = input.dedup?.archiveKey ?? '';
  const plan =
    input.dedup === undefined ? input.exchanges.map((): RecordPlan => ({ kind: 'response' })) : planRecords(input.exchanges, input.dedup.known, ownKey);
  const requires = requiredArchives(plan, ownKey);
  const { warc, cdx } = buildWarc(input.exchanges, warcinfoFields(input.software, input.provenance), created, plan);
  const files = [
    { name: WARC_FILENAME, path: WARC_PATH, data: warc, compress: false },
    { name: 'index.cdx', path: 'indexes/index.cdx', data: Buffer.from(cdx, 'utf8'), compress: true },
    { name: 'pages.jsonl', path: 'pages/pages.jsonl', data: Buffer.from(pageLines(input.pages), 'utf8'), compress: true },
  ];
  const main = input.pages[0];
  const datapackage: DataPackage = {
    profile: 'data-package',
    wacz_version: WACZ_VERSION,
    title: input.title ?? (main?.title || main?.url) ?? 'Web archive',
    created: created.toISOString(),
    software: input.software,
    ...(main !== undefined ? { mainPageUrl: main.url, mainPageDate: main.ts.toISOString() } : {}),
    resources: files.map((f) => ({ name: f.name, path: f.path, hash: `sha256:${sha256Hex(f.data)}`, bytes: f.data.length })),
    ...(requires.length > 0 ? { requires } : {}),
  };
  const dpBytes = Buffer.from(JSON.stringify(datapackage, null, 2), 'utf8');
  const dpHash = `sha256:${sha256Hex(dpBytes)}`;
  const digest: DataPackageDigest = { path: 'datapackage.json', hash: dpHash };
  if (input.signer !== undefined) digest.signedData = signHash(dpHash, input.signer, input.software, created);
  const wacz = await zip(
    [
      ...files.map((f) => ({ name: f.path, data: f.data, compress: f.compress })),
      { name: 'datapackage.json', data: dpBytes, compress: true },
      { name: 'datapackage-digest.json', data: Buffer.from(JSON.stringify(digest, null, 2), 'utf8'), compress: true },
    ],
    created,
  );
  const stored = input.dedup === undefined ? [] : storedPayloads(input.exchanges, plan, ownKey);
  const revisited = plan.flatMap((p) => (p.kind === 'revisit' ? [p.of.digest] : []));
  return { wacz, requires, stored, revisited };
}
