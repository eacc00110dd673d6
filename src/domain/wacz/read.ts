// Reads a WACZ back (from a buffer) and checks it: every datapackage resource present with the
// hash and size it claims, the digest file matching datapackage.json, a wacz-auth anonymous
// signature that verifies, WARCs and indexes stored rather than deflated, every page line kept.
import { createPublicKey, verify } from 'node:crypto';
import yauzl from 'yauzl';
import { parsePagesJsonl, type PagesHeader } from '../pages-jsonl.ts';
import { parseCdxj, type CdxEntry } from './cdx.ts';
import { parseWarc, RECORD_TRAILER_BYTES, sha256Hex, type ParsedRecord } from './warc.ts';
import type { DataPackage, DataPackageDigest, WaczPageLine } from './write.ts';

export interface ZipEntryData {
  data: Buffer;
  /** 0 stored, 8 deflated */
  compressionMethod: number;
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
            out.set(entry.fileName, { data: Buffer.concat(chunks), compressionMethod: entry.compressionMethod });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

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
    if (name.startsWith('archive/') && name.endsWith('.warc')) records.push(...parseWarc(e.data));
  }
  return { entries, datapackage, digest, pagesHeader: header, pages, cdx, records };
}

/** What is wrong with a WACZ, as sentences; empty when it checks out. */
export function waczProblems(w: WaczContents): string[] {
  const problems: string[] = [];
  for (const r of w.datapackage.resources) {
    const e = w.entries.get(r.path);
    if (e === undefined) {
      problems.push(`${r.path} is listed in datapackage.json but missing`);
      continue;
    }
    if (r.hash !== `sha256:${sha256Hex(e.data)}`) problems.push(`${r.path}: hash ${r.hash} does not match the file`);
    if (r.bytes !== e.data.length) problems.push(`${r.path}: bytes ${r.bytes} but the file has ${e.data.length}`);
  }
  for (const [name, e] of w.entries) {
    if ((name.startsWith('archive/') || name.startsWith('indexes/')) && e.compressionMethod !== 0)
      problems.push(`${name} is deflated; WARCs and indexes must be stored`);
    if (!['datapackage.json', 'datapackage-digest.json'].includes(name) && !w.datapackage.resources.some((r) => r.path === name))
      problems.push(`${name} is not listed in datapackage.json`);
  }
  if (w.digest !== undefined) {
    const dp = w.entries.get('datapackage.json')!.data;
    if (w.digest.hash !== `sha256:${sha256Hex(dp)}`) problems.push('datapackage-digest.json does not match datapackage.json');
    const s = w.digest.signedData;
    if (s !== undefined) {
      if (s.hash !== w.digest.hash) problems.push('signedData.hash is not the datapackage hash');
      try {
        const key = createPublicKey({ key: Buffer.from(s.publicKey, 'base64'), format: 'der', type: 'spki' });
        if (!verify('sha256', Buffer.from(s.hash, 'utf8'), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s.signature, 'base64')))
          problems.push('signature does not verify');
      } catch (err) {
        problems.push(`signature cannot be checked: ${(err as Error).message}`);
      }
    }
  }
  const warcs = new Map<string, Buffer>();
  for (const [name, e] of w.entries) if (name.startsWith('archive/')) warcs.set(name.slice('archive/'.length), e.data);
  for (const c of w.cdx) {
    const warc = warcs.get(c.filename);
    if (warc === undefined) {
      problems.push(`CDX line for ${c.url} names ${c.filename}, which is not in archive/`);
      continue;
    }
    let rec: ParsedRecord | undefined;
    try {
      rec = parseWarc(warc.subarray(c.offset, c.offset + c.length + RECORD_TRAILER_BYTES))[0];
    } catch {
      rec = undefined;
    }
    // a revisit (payload stored in a WACZ this one requires) is indexed as warc/revisit
    const type = c.mime === 'warc/revisit' ? 'revisit' : 'response';
    if (rec?.headers['WARC-Type'] !== type || rec.headers['WARC-Target-URI'] !== c.url)
      problems.push(`CDX line for ${c.url} does not point at its ${type} record`);
  }
  return problems;
}
