// Minimal zips (and WACZ-shaped zips) built with yazl, for the search tests. Used where the
// project's WACZ writer is not the thing under test.
import { Readable } from 'node:stream';
import yazl from 'yazl';
import { formatPagesJsonl, type PageEntry } from '../../src/domain/pages-jsonl.ts';

export interface ZipInput {
  name: string;
  data: Buffer | string;
  /** deflate (default false: stored, as WACZ stores its WARCs) */
  compress?: boolean;
  /** write through a stream with no size known up front: yazl then uses a data descriptor */
  streamed?: boolean;
  forceZip64?: boolean;
}

export async function buildZip(entries: ZipInput[], opts: { comment?: string; forceZip64?: boolean } = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const mtime = new Date('2024-05-01T00:00:00Z');
  for (const e of entries) {
    const data = typeof e.data === 'string' ? Buffer.from(e.data) : e.data;
    const options = { compress: e.compress ?? false, forceZip64Format: e.forceZip64 ?? false, mtime };
    if (e.streamed) zip.addReadStream(Readable.from([data]), e.name, options);
    else zip.addBuffer(data, e.name, options);
  }
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
  zip.end({ comment: opts.comment ?? '', forceZip64Format: opts.forceZip64 ?? false });
  return done;
}

/** A WACZ-shaped zip: a (fake, stored) WARC of `warcBytes` bytes, then pages/pages.jsonl, datapackage.json. */
export async function buildPagesWacz(pages: PageEntry[], opts: { warcBytes?: number; compressPages?: boolean } = {}): Promise<Buffer> {
  const warc = Buffer.alloc(opts.warcBytes ?? 4096, 0x57);
  return buildZip([
    { name: 'archive/data.warc', data: warc },
    { name: 'pages/pages.jsonl', data: formatPagesJsonl(pages), compress: opts.compressPages ?? true },
    { name: 'datapackage.json', data: JSON.stringify({ profile: 'data-package', wacz_version: '1.1.1', resources: [] }) },
  ]);
}
