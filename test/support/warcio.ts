// Reads a WARC back with Webrecorder's warcio.js, the library replay engines read WARCs with: what
// it finds is what a second reader finds, not what this project's own parser believes.
import { CDXIndexer, WARCParser } from 'warcio';
import type { HeaderList } from '../../src/domain/wacz/warc.ts';

export interface WarcioRecord {
  type: string | undefined;
  uri: string | undefined;
  header(name: string): string | null;
  /** the block as text (a response's payload, an info or metadata record's fields) */
  content: string;
  /** a response's HTTP status */
  status: number | undefined;
}

export async function readWithWarcio(warc: Buffer): Promise<WarcioRecord[]> {
  const out: WarcioRecord[] = [];
  for await (const record of new WARCParser([warc])) {
    const content = await record.contentText();
    const status = record.httpHeaders?.statusCode;
    out.push({
      type: record.warcType,
      uri: record.warcTargetURI ?? undefined,
      header: (name) => record.warcHeader(name) ?? null,
      content,
      status: typeof status === 'number' ? status : undefined,
    });
  }
  return out;
}

/** An application/warc-fields block as [name, value] pairs, in order. */
export function warcFieldsOf(text: string): HeaderList {
  return text
    .split('\r\n')
    .filter((l) => l !== '')
    .map((l): [string, string] => {
      const i = l.indexOf(':');
      return [l.slice(0, i), l.slice(i + 1).trim()];
    });
}

/** warcio's own CDX index of a WARC (its keys are not canonical SURTs; offsets, lengths and fields are what it read). */
export async function warcioIndex(warc: Buffer, filename: string): Promise<{ url: string; status: string; mime: string; offset: number; length: number }[]> {
  const out: { url: string; status: string; mime: string; offset: number; length: number }[] = [];
  async function* bytes(): AsyncGenerator<Uint8Array> {
    yield warc;
  }
  for await (const c of new CDXIndexer({ noSurt: true }).iterIndex([{ filename, reader: bytes() }])) {
    const r = c as Record<string, unknown>;
    out.push({ url: String(r.url), status: String(r.status), mime: String(r.mime), offset: Number(r.offset), length: Number(r.length) });
  }
  return out;
}
