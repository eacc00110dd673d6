// Reads a WACZ back (from a buffer) and checks it: every datapackage resource present with the
// hash and size it claims, the digest file matching datapackage.json, a wacz-auth anonymous
// signature that verifies, WARCs (.warc or record-at-a-time .warc.gz) and compressed indexes
// stored rather than deflated, every CDX line pointing at its record, every page line kept.
import { createPublicKey, verify } from 'node:crypto';
import yauzl from 'yauzl';
import { parsePagesJsonl, type PagesHeader } from '../pages-jsonl.ts';
import { parseCdxj, type CdxEntry } from './cdx.ts';
import { parseWarc, parseWarcFile, RECORD_TRAILER_BYTES, sha256Hex, warcGzRecordAt, type ParsedRecord } from './warc.ts';
import type { DataPackage, DataPackageDigest, SignedData, WaczPageLine } from './write.ts';

export interface ZipEntryData {
  data: Buffer;
  /** 0 stored, 8 deflated */
  compressionMethod: number;
  /** the entry's bytes in the zip (compressed size) */
  storedBytes: number;
}

export interface WaczContents {
  entries: Map<string, ZipEntryData>;
  datapackage: DataPackage;
  digest: DataPackageDigest | undefined;
  pagesHeader: PagesHeader;
  pages: WaczPageLine[];
  cdx: CdxEntry[];
  records: ParsedRecord[];
}

/** Every entry of a zip, inflated. */
export function unzip(buf: Buffer): Promise<Map<string, ZipEntryData>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('not a zip'));
      const out = new Map<string, ZipEntryData>();
      zip.on('error', reject);
      zip.on('end', () => resolve(out));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error(`cannot read ${entry.fileName}`));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            out.set(entry.fileName, { data: Buffer.concat(chunks), compressionMethod: entry.compressionMethod, storedBytes: entry.compressedSize });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

const isWarcFile = (name: string): boolean => name.startsWith('archive/') && (name.endsWith('.warc') || name.endsWith('.warc.gz'));

function json<T>(entries: Map<string, ZipEntryData>, name: string): T {
  const e = entries.get(name);
  if (e === undefined) throw new Error(`WACZ has no ${name}`);
  return JSON.parse(e.data.toString('utf8')) as T;
}

/** Parses the page lines, keeping textWithheld (which the shared parser does not carry). */
export function parseWaczPages(text: string): { header: PagesHeader; pages: WaczPageLine[] } {
  const parsed = parsePagesJsonl(text);
  const raw = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(1)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const pages = parsed.pages.map((p, i) => {
    const w = raw[i]?.textWithheld;
    return typeof w === 'string' ? { ...p, textWithheld: w as WaczPageLine['textWithheld'] } : (p as WaczPageLine);
  });
  return { header: parsed.header, pages };
}

export async function readWacz(buf: Buffer): Promise<WaczContents> {
  const entries = await unzip(buf);
  const datapackage = json<DataPackage>(entries, 'datapackage.json');
  const digest = entries.has('datapackage-digest.json') ? json<DataPackageDigest>(entries, 'datapackage-digest.json') : undefined;
  const pagesEntry = entries.get('pages/pages.jsonl');
  if (pagesEntry === undefined) throw new Error('WACZ has no pages/pages.jsonl');
  const { header, pages } = parseWaczPages(pagesEntry.data.toString('utf8'));
  const cdx: CdxEntry[] = [];
  const records: ParsedRecord[] = [];
  for (const [name, e] of entries) {
    if (name.startsWith('indexes/') && (name.endsWith('.cdx') || name.endsWith('.cdxj'))) cdx.push(...parseCdxj(e.data.toString('utf8')));
    if (isWarcFile(name)) records.push(...parseWarcFile(name, e.data));
  }
  return { entries, datapackage, digest, pagesHeader: header, pages, cdx, records };
}

function resourceProblems(w: WaczContents): string[] {
  return w.datapackage.resources.flatMap((r) => {
    const e = w.entries.get(r.path);
    if (e === undefined) return [`${r.path} is listed in datapackage.json but missing`];
    const out: string[] = [];
    if (r.hash !== `sha256:${sha256Hex(e.data)}`) out.push(`${r.path}: hash ${r.hash} does not match the file`);
    if (r.bytes !== e.data.length) out.push(`${r.path}: bytes ${r.bytes} but the file has ${e.data.length}`);
    return out;
  });
}

/** WACZ 1.1.1 "Zip Compression": what is compressed already or read by range is stored; a plain index may be deflated. */
export function mustBeStored(name: string): boolean {
  return name.startsWith('archive/') || (name.startsWith('indexes/') && !name.endsWith('.cdx') && !name.endsWith('.cdxj'));
}

const UNLISTED = new Set(['datapackage.json', 'datapackage-digest.json']);

function entryProblems(w: WaczContents): string[] {
  return [...w.entries].flatMap(([name, e]) => [
    ...(mustBeStored(name) && e.compressionMethod !== 0 ? [`${name} is deflated; WARCs and compressed indexes must be stored`] : []),
    ...(!UNLISTED.has(name) && !w.datapackage.resources.some((r) => r.path === name) ? [`${name} is not listed in datapackage.json`] : []),
  ]);
}

function signatureProblems(s: SignedData, hash: string): string[] {
  if (s.hash !== hash) return ['signedData.hash is not the datapackage hash'];
  try {
    const key = createPublicKey({ key: Buffer.from(s.publicKey, 'base64'), format: 'der', type: 'spki' });
    return verify('sha256', Buffer.from(s.hash, 'utf8'), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s.signature, 'base64'))
      ? []
      : ['signature does not verify'];
  } catch (err) {
    return [`signature cannot be checked: ${(err as Error).message}`];
  }
}

function digestProblems(w: WaczContents): string[] {
  if (w.digest === undefined) return [];
  const dp = w.entries.get('datapackage.json')!.data;
  const out = w.digest.hash !== `sha256:${sha256Hex(dp)}` ? ['datapackage-digest.json does not match datapackage.json'] : [];
  return w.digest.signedData === undefined ? out : [...out, ...signatureProblems(w.digest.signedData, w.digest.hash)];
}

/** The record a CDX line points at: its gzip member in a .warc.gz, the record itself in a .warc. */
function recordAt(name: string, warc: Buffer, c: CdxEntry): ParsedRecord | undefined {
  try {
    return name.endsWith('.gz') ? warcGzRecordAt(warc, c.offset, c.length) : parseWarc(warc.subarray(c.offset, c.offset + c.length + RECORD_TRAILER_BYTES))[0];
  } catch {
    return undefined;
  }
}

function cdxProblems(w: WaczContents): string[] {
  return w.cdx.flatMap((c) => {
    const warc = w.entries.get(`archive/${c.filename}`);
    if (warc === undefined) return [`CDX line for ${c.url} names ${c.filename}, which is not in archive/`];
    const rec = recordAt(c.filename, warc.data, c);
    // a revisit (payload stored in a WACZ this one requires) is indexed as warc/revisit
    const type = c.mime === 'warc/revisit' ? 'revisit' : 'response';
    return rec?.headers['WARC-Type'] !== type || rec.headers['WARC-Target-URI'] !== c.url ? [`CDX line for ${c.url} does not point at its ${type} record`] : [];
  });
}

/** What is wrong with a WACZ, as sentences; empty when it checks out. */
export function waczProblems(w: WaczContents): string[] {
  return [...resourceProblems(w), ...entryProblems(w), ...digestProblems(w), ...cdxProblems(w)];
}
