import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import yauzl from 'yauzl';
import { bufferRangeSource, DEFAULT_TAIL_BYTES, findEndOfCentralDirectory, readZipEntry, ZipError, type RangeSource } from '../../src/search/zip-range.ts';
import { buildPagesWacz, buildZip } from '../support/search-zip.ts';
import { parsePagesJsonl } from '../../src/domain/pages-jsonl.ts';

const text = (b: Buffer | undefined): string | undefined => b?.toString('utf8');

/** What yauzl (a full reader) finds, to cross-check ours. */
async function yauzlEntries(buf: Buffer): Promise<Map<string, Buffer>> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.fromBuffer(buf, { lazyEntries: true }, (err, z) => (err ? reject(err) : resolve(z))));
  const out = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          out.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
        stream.on('error', reject);
      });
    });
    zip.on('end', () => resolve());
    zip.on('error', reject);
    zip.readEntry();
  });
  return out;
}

describe('readZipEntry', () => {
  it('reads stored and deflated entries', async () => {
    const zip = await buildZip([
      { name: 'a.txt', data: 'stored body' },
      { name: 'pages/pages.jsonl', data: 'deflated '.repeat(100), compress: true },
    ]);
    expect(text(await readZipEntry(bufferRangeSource(zip), 'a.txt'))).toBe('stored body');
    expect(text(await readZipEntry(bufferRangeSource(zip), 'pages/pages.jsonl'))).toBe('deflated '.repeat(100));
  });

  it('returns undefined for a missing entry', async () => {
    const zip = await buildZip([{ name: 'a.txt', data: 'x' }]);
    expect(await readZipEntry(bufferRangeSource(zip), 'pages/pages.jsonl')).toBeUndefined();
  });

  it('reads entries written with a data descriptor (sizes only in the central directory)', async () => {
    const zip = await buildZip([
      { name: 'one', data: 'first', streamed: true, compress: true },
      { name: 'two', data: 'second entry', streamed: true },
    ]);
    expect(text(await readZipEntry(bufferRangeSource(zip), 'one'))).toBe('first');
    expect(text(await readZipEntry(bufferRangeSource(zip), 'two'))).toBe('second entry');
  });

  it('reads ZIP64 archives', async () => {
    const zip = await buildZip(
      [
        { name: 'a', data: 'x'.repeat(5000), forceZip64: true, compress: true },
        { name: 'b', data: 'bee', forceZip64: true },
      ],
      { forceZip64: true },
    );
    expect(text(await readZipEntry(bufferRangeSource(zip), 'a'))).toBe('x'.repeat(5000));
    expect(text(await readZipEntry(bufferRangeSource(zip), 'b'))).toBe('bee');
  });

  it('finds the end record behind a long comment, and not a signature inside the comment', async () => {
    // yazl refuses such a comment, so append it by hand: comment bytes after the end record.
    const plain = await buildZip([{ name: 'a', data: 'hello' }]);
    const comment = Buffer.concat([Buffer.alloc(3000, 0x63), Buffer.from([0x50, 0x4b, 0x05, 0x06]), Buffer.alloc(40, 0x64)]);
    const zip = Buffer.concat([plain, comment]);
    zip.writeUInt16LE(comment.length, plain.length - 2);
    expect(text(await readZipEntry(bufferRangeSource(zip), 'a'))).toBe('hello');
    const withComment = await buildZip([{ name: 'a', data: 'hello' }], { comment: 'a plain comment' });
    expect(text(await readZipEntry(bufferRangeSource(withComment), 'a'))).toBe('hello');
    expect(text(await readZipEntry(bufferRangeSource(zip), 'a'))).toBe('hello');
  });

  it('does not download the whole file: a big WARC is never read', async () => {
    const wacz = await buildPagesWacz([{ url: 'https://example.com/', title: 'Example', text: 'hello' }], { warcBytes: 5 * 1024 * 1024 });
    const src = bufferRangeSource(wacz);
    const pages = parsePagesJsonl(text(await readZipEntry(src, 'pages/pages.jsonl'))!);
    expect(pages.pages).toEqual([{ url: 'https://example.com/', title: 'Example', text: 'hello' }]);
    // pages.jsonl sits in the tail: one read of at most DEFAULT_TAIL_BYTES
    expect(src.requests).toBe(1);
    expect(src.bytesRead).toBeLessThanOrEqual(DEFAULT_TAIL_BYTES);
  });

  it('reads an entry far from the end with a small tail: tail, central directory, entry', async () => {
    const zip = await buildZip([
      { name: 'pages/pages.jsonl', data: 'first entry' },
      { name: 'archive/data.warc', data: Buffer.alloc(2 * 1024 * 1024, 0x57) },
      { name: 'later', data: Buffer.alloc(100_000, 0x41), compress: false },
    ]);
    const src = bufferRangeSource(zip);
    expect(text(await readZipEntry(src, 'pages/pages.jsonl', { tailBytes: 1024 }))).toBe('first entry');
    expect(src.requests).toBeLessThanOrEqual(3);
    expect(src.bytesRead).toBeLessThan(2048);
    const big = bufferRangeSource(zip);
    expect(text(await readZipEntry(big, 'pages/pages.jsonl'))).toBe('first entry');
    expect(big.bytesRead).toBeLessThan(DEFAULT_TAIL_BYTES + 1024);
  });

  it('refuses what is not a zip, and a truncated one', async () => {
    await expect(readZipEntry(bufferRangeSource(Buffer.from('just text, no zip here')), 'a')).rejects.toThrow(ZipError);
    await expect(readZipEntry(bufferRangeSource(Buffer.alloc(0)), 'a')).rejects.toThrow(/no end of central directory/);
    const zip = await buildZip([{ name: 'a', data: 'hello' }]);
    await expect(readZipEntry(bufferRangeSource(zip.subarray(0, zip.length - 5)), 'a')).rejects.toThrow(ZipError);
  });

  it('detects corrupted data by its CRC', async () => {
    const zip = await buildZip([{ name: 'a', data: 'hello world' }]);
    const at = zip.indexOf('hello world');
    const bad = Buffer.from(zip);
    bad[at] = 'j'.charCodeAt(0);
    await expect(readZipEntry(bufferRangeSource(bad), 'a')).rejects.toThrow(/CRC mismatch/);
  });

  it('refuses an entry larger than the limit before reading it', async () => {
    const zip = await buildZip([{ name: 'a', data: 'x'.repeat(10_000), compress: true }]);
    const src = bufferRangeSource(zip);
    await expect(readZipEntry(src, 'a', { maxSize: 1000 })).rejects.toThrow(/more than the 1000 allowed/);
  });

  it('reports a source that returns fewer bytes than asked', async () => {
    const zip = await buildZip([
      { name: 'big', data: Buffer.alloc(50_000, 1) },
      { name: 'a', data: 'hello' },
    ]);
    const inner = bufferRangeSource(zip);
    const short: RangeSource = { tail: (n) => inner.tail(n), read: async (s, n) => (await inner.read(s, n)).subarray(0, Math.max(0, n - 1)) };
    await expect(readZipEntry(short, 'big', { tailBytes: 1024 })).rejects.toThrow(/short read/);
  });

  it('agrees with yauzl on any set of entries (property)', async () => {
    const entry = fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9_-]{0,12}(\/[a-z0-9_-]{1,12}){0,2}(\.[a-z]{1,5})?$/),
      data: fc.uint8Array({ maxLength: 3000 }).map((a) => Buffer.from(a)),
      compress: fc.boolean(),
      streamed: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(entry, { selector: (e) => e.name, minLength: 1, maxLength: 6 }),
        fc.boolean(),
        fc.constantFrom(22, 100, 1024, DEFAULT_TAIL_BYTES),
        async (entries, zip64, tail) => {
          const zip = await buildZip(entries, { forceZip64: zip64 });
          const reference = await yauzlEntries(zip);
          for (const e of entries) {
            const ours = await readZipEntry(bufferRangeSource(zip), e.name, { tailBytes: tail });
            expect(ours).toEqual(reference.get(e.name));
            expect(ours).toEqual(e.data);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('findEndOfCentralDirectory', () => {
  it('reads the counts of a plain zip', async () => {
    const zip = await buildZip([
      { name: 'a', data: 'x' },
      { name: 'b', data: 'y' },
    ]);
    const eocd = findEndOfCentralDirectory(zip, 0, zip.length)!;
    expect(eocd.entries).toBe(2);
    expect(eocd.offset).toBe(zip.length - 22);
    expect(eocd.needsZip64).toBe(false);
    expect(eocd.cdOffset + eocd.cdSize).toBe(eocd.offset);
  });

  it('works on a tail that starts mid-file', async () => {
    const zip = await buildZip([{ name: 'a', data: Buffer.alloc(2000) }]);
    const tail = zip.subarray(zip.length - 100);
    expect(findEndOfCentralDirectory(tail, zip.length - 100, zip.length)?.offset).toBe(zip.length - 22);
  });
});
