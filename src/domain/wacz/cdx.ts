// The CDXJ index under indexes/ (one line per response record: SURT key, 14-digit timestamp, JSON),
// sorted, as the WACZ spec and replay expect. Pure. Not warcio.js's CDXIndexer, which keys lines
// with its getSurt (see surt.ts); its offsets, lengths and fields agree with these
// (provenance.test.ts), and Python cdxj-indexer's and pywb's index of the same WARC is line for
// line this one.
import { surt } from './surt.ts';

export { surt };

export interface CdxEntry {
  url: string;
  /** 14 digits, UTC */
  timestamp: string;
  mime: string;
  status: string;
  digest: string;
  /** record offset in the WARC named by filename, and its length without the two CRLFs after it */
  length: number;
  offset: number;
  filename: string;
}

export function cdxTimestamp(d: Date): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

export function cdxjLine(e: CdxEntry): string {
  const json = { url: e.url, mime: e.mime, status: e.status, digest: e.digest, length: String(e.length), offset: String(e.offset), filename: e.filename };
  return `${surt(e.url)} ${e.timestamp} ${JSON.stringify(json)}`;
}

/** The whole index: lines sorted by key then timestamp, newline-terminated. */
export function formatCdxj(entries: CdxEntry[]): string {
  const lines = entries.map(cdxjLine).sort();
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

export function parseCdxj(text: string): CdxEntry[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line, i) => {
      const a = line.indexOf(' ');
      const b = line.indexOf(' ', a + 1);
      if (a < 0 || b < 0) throw new Error(`CDXJ line ${i + 1}: not "key timestamp json"`);
      const ts = line.slice(a + 1, b);
      const j = JSON.parse(line.slice(b + 1)) as Record<string, string>;
      if (!/^\d{14}$/.test(ts)) throw new Error(`CDXJ line ${i + 1}: bad timestamp ${ts}`);
      return {
        url: String(j.url),
        timestamp: ts,
        mime: String(j.mime ?? ''),
        status: String(j.status ?? ''),
        digest: String(j.digest ?? ''),
        length: Number(j.length),
        offset: Number(j.offset),
        filename: String(j.filename),
      };
    });
}
