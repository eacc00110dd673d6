// Reads one entry out of a zip (a WACZ) through ranged reads, never the whole file: the end of
// central directory from the tail, then the central directory, then the entry's local header and
// data. A WACZ's WARCs can be hundreds of megabytes; pages/pages.jsonl is a few kilobytes.
// Stored and deflated entries, ZIP64, and entries written with a data descriptor are handled (the
// sizes and CRC are taken from the central directory). The byte parsing is pure and exported for
// tests; only RangeSource does I/O.
import { crc32, inflateRawSync } from 'node:zlib';

export interface RangeSource {
  /** The last `length` bytes (all of them when the object is shorter) and the object's size. */
  tail(length: number): Promise<{ bytes: Buffer; size: number }>;
  /** Exactly `length` bytes from `start`. */
  read(start: number, length: number): Promise<Buffer>;
}

export class ZipError extends Error {
  override name = 'ZipError';
}

const EOCD_SIG = 0x06054b50;
const EOCD64_LOCATOR_SIG = 0x07064b50;
const EOCD64_SIG = 0x06064b50;
const CENTRAL_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;
const EOCD_SIZE = 22;
const EOCD64_LOCATOR_SIZE = 20;
const EOCD64_SIZE = 56;
const CENTRAL_SIZE = 46;
const LOCAL_SIZE = 30;
const MAX_COMMENT = 0xffff;
/**
 * The first ranged read takes this much of the end. It holds the end record and the central
 * directory, and in a WACZ usually pages/pages.jsonl as well (it is written after the WARCs and
 * index, right before datapackage.json): one GET instead of two or three, which is what bounds
 * indexing speed against an object store. A WACZ smaller than this is read in that one GET.
 */
export const DEFAULT_TAIL_BYTES = 64 * 1024;

export interface EndOfCentralDirectory {
  /** absolute offset of the EOCD record in the file */
  offset: number;
  entries: number;
  cdSize: number;
  cdOffset: number;
  /** true when a field is saturated, so the ZIP64 record holds the real values */
  needsZip64: boolean;
}

/**
 * Finds the EOCD in the last bytes of a file. `tailStart` is the absolute offset of `tail[0]`,
 * `size` the file's length. Scans backwards and accepts a signature only where the comment length
 * it declares ends exactly at the end of the file, so a signature inside a comment is not taken.
 */
export function findEndOfCentralDirectory(tail: Buffer, tailStart: number, size: number): EndOfCentralDirectory | undefined {
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail.readUInt32LE(i) !== EOCD_SIG) continue;
    const commentLength = tail.readUInt16LE(i + 20);
    if (tailStart + i + EOCD_SIZE + commentLength !== size) continue;
    const entries = tail.readUInt16LE(i + 10);
    const cdSize = tail.readUInt32LE(i + 12);
    const cdOffset = tail.readUInt32LE(i + 16);
    const disk = tail.readUInt16LE(i + 4);
    const cdDisk = tail.readUInt16LE(i + 6);
    const needsZip64 = entries === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff || disk === 0xffff || cdDisk === 0xffff;
    if (!needsZip64 && (disk !== 0 || cdDisk !== 0)) throw new ZipError('multi-disk zip files are not supported');
    return { offset: tailStart + i, entries, cdSize, cdOffset, needsZip64 };
  }
  return undefined;
}

/** The ZIP64 locator (20 bytes just before the EOCD): where the ZIP64 EOCD record is. */
export function parseZip64Locator(buf: Buffer): number | undefined {
  if (buf.length < EOCD64_LOCATOR_SIZE || buf.readUInt32LE(0) !== EOCD64_LOCATOR_SIG) return undefined;
  return safeNumber(buf.readBigUInt64LE(8), 'ZIP64 end of central directory offset');
}

export function parseZip64EndOfCentralDirectory(buf: Buffer): { entries: number; cdSize: number; cdOffset: number } {
  if (buf.length < EOCD64_SIZE || buf.readUInt32LE(0) !== EOCD64_SIG) throw new ZipError('bad ZIP64 end of central directory record');
  return {
    entries: safeNumber(buf.readBigUInt64LE(32), 'entry count'),
    cdSize: safeNumber(buf.readBigUInt64LE(40), 'central directory size'),
    cdOffset: safeNumber(buf.readBigUInt64LE(48), 'central directory offset'),
  };
}

export interface CentralEntry {
  name: string;
  flags: number;
  method: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

/** Every entry of a central directory (the bytes from its first to its last record). */
export function parseCentralDirectory(buf: Buffer, expectedEntries?: number): CentralEntry[] {
  const entries: CentralEntry[] = [];
  let p = 0;
  while (p + CENTRAL_SIZE <= buf.length && buf.readUInt32LE(p) === CENTRAL_SIG) {
    const flags = buf.readUInt16LE(p + 8);
    const method = buf.readUInt16LE(p + 10);
    const crc = buf.readUInt32LE(p + 16);
    let compressedSize = buf.readUInt32LE(p + 20);
    let uncompressedSize = buf.readUInt32LE(p + 24);
    const nameLength = buf.readUInt16LE(p + 28);
    const extraLength = buf.readUInt16LE(p + 30);
    const commentLength = buf.readUInt16LE(p + 32);
    let localHeaderOffset = buf.readUInt32LE(p + 42);
    const end = p + CENTRAL_SIZE + nameLength + extraLength + commentLength;
    if (end > buf.length) throw new ZipError('central directory record runs past its end');
    const nameBytes = buf.subarray(p + CENTRAL_SIZE, p + CENTRAL_SIZE + nameLength);
    // bit 11: UTF-8 names; otherwise CP437, which agrees with UTF-8 for the ASCII names a WACZ uses
    const name = nameBytes.toString(flags & 0x800 ? 'utf8' : 'latin1');
    // ZIP64 extended information: only the saturated fields are present, in this order.
    const extra = buf.subarray(p + CENTRAL_SIZE + nameLength, p + CENTRAL_SIZE + nameLength + extraLength);
    for (let e = 0; e + 4 <= extra.length;) {
      const id = extra.readUInt16LE(e);
      const size = extra.readUInt16LE(e + 2);
      if (id === 0x0001) {
        let q = e + 4;
        const take = (what: string): number => {
          if (q + 8 > e + 4 + size) throw new ZipError(`ZIP64 extra field of ${name} lacks the ${what}`);
          const v = safeNumber(extra.readBigUInt64LE(q), what);
          q += 8;
          return v;
        };
        if (uncompressedSize === 0xffffffff) uncompressedSize = take('uncompressed size');
        if (compressedSize === 0xffffffff) compressedSize = take('compressed size');
        if (localHeaderOffset === 0xffffffff) localHeaderOffset = take('local header offset');
      }
      e += 4 + size;
    }
    entries.push({ name, flags, method, crc32: crc, compressedSize, uncompressedSize, localHeaderOffset });
    p = end;
  }
  if (expectedEntries !== undefined && entries.length !== expectedEntries) {
    throw new ZipError(`central directory holds ${entries.length} entries, the end record says ${expectedEntries}`);
  }
  return entries;
}

/** Length of a local file header (fixed part + name + extra): where the data starts. */
export function localHeaderLength(buf: Buffer): number {
  if (buf.length < LOCAL_SIZE || buf.readUInt32LE(0) !== LOCAL_SIG) throw new ZipError('bad local file header');
  return LOCAL_SIZE + buf.readUInt16LE(26) + buf.readUInt16LE(28);
}

/** Decompresses an entry's data and checks its size and CRC against the central directory. */
export function extractEntryData(entry: CentralEntry, data: Buffer): Buffer {
  if (entry.flags & 0x1) throw new ZipError(`${entry.name} is encrypted`);
  let out: Buffer;
  if (entry.method === 0) out = data;
  else if (entry.method === 8) {
    try {
      out = inflateRawSync(data, { maxOutputLength: Math.max(entry.uncompressedSize, 1) });
    } catch (err) {
      throw new ZipError(`${entry.name}: cannot inflate (${(err as Error).message})`);
    }
  } else throw new ZipError(`${entry.name}: unsupported compression method ${entry.method}`);
  if (out.length !== entry.uncompressedSize) throw new ZipError(`${entry.name}: ${out.length} bytes, the central directory says ${entry.uncompressedSize}`);
  if (crc32(out) >>> 0 !== entry.crc32 >>> 0) throw new ZipError(`${entry.name}: CRC mismatch`);
  return out;
}

function safeNumber(v: bigint, what: string): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipError(`${what} is too large`);
  return Number(v);
}

export interface ReadEntryOptions {
  /** refuse entries whose uncompressed size is larger (default 64 MiB) */
  maxSize?: number;
  /** how much of the end the first read takes (default DEFAULT_TAIL_BYTES, at least 22) */
  tailBytes?: number;
}

/**
 * One entry's bytes, or undefined when the zip has no entry of that name. Reads the tail, then
 * the central directory and the entry where the tail does not already hold them: one to four
 * ranged reads whatever the file's size, and never a byte of the entries in between.
 */
export async function readZipEntry(source: RangeSource, name: string, opts: ReadEntryOptions = {}): Promise<Buffer | undefined> {
  const maxSize = opts.maxSize ?? 64 * 1024 * 1024;
  let { bytes: tail, size } = await source.tail(Math.max(EOCD_SIZE, opts.tailBytes ?? DEFAULT_TAIL_BYTES));
  let tailStart = size - tail.length;
  let eocd = findEndOfCentralDirectory(tail, tailStart, size);
  if (eocd === undefined && tail.length < size) {
    ({ bytes: tail, size } = await source.tail(EOCD_SIZE + MAX_COMMENT + EOCD64_LOCATOR_SIZE));
    tailStart = size - tail.length;
    eocd = findEndOfCentralDirectory(tail, tailStart, size);
  }
  if (eocd === undefined) throw new ZipError('not a zip file: no end of central directory');

  const read = async (start: number, length: number): Promise<Buffer> => {
    if (start < 0 || length < 0 || start + length > size) throw new ZipError(`range ${start}+${length} lies outside the file (${size} bytes)`);
    if (start >= tailStart) return tail.subarray(start - tailStart, start - tailStart + length);
    const got = await source.read(start, length);
    if (got.length !== length) throw new ZipError(`short read at ${start}: ${got.length} of ${length} bytes`);
    return got;
  };

  let { entries: count, cdSize, cdOffset } = eocd;
  const locatorAt = eocd.offset - EOCD64_LOCATOR_SIZE;
  if (locatorAt >= 0) {
    const eocd64At = parseZip64Locator(await read(locatorAt, EOCD64_LOCATOR_SIZE));
    if (eocd64At !== undefined) ({ entries: count, cdSize, cdOffset } = parseZip64EndOfCentralDirectory(await read(eocd64At, EOCD64_SIZE)));
    else if (eocd.needsZip64) throw new ZipError('ZIP64 fields without a ZIP64 locator');
  } else if (eocd.needsZip64) throw new ZipError('ZIP64 fields without a ZIP64 locator');
  if (cdOffset + cdSize > eocd.offset) throw new ZipError('central directory overlaps the end record');

  const entry = parseCentralDirectory(await read(cdOffset, cdSize), count).find((e) => e.name === name);
  if (entry === undefined) return undefined;
  if (entry.uncompressedSize > maxSize) throw new ZipError(`${name} is ${entry.uncompressedSize} bytes, more than the ${maxSize} allowed`);

  // The local header's extra field may differ from the central one; guess generously, read more if short.
  const guess = Math.min(LOCAL_SIZE + Buffer.byteLength(name) + 256 + entry.compressedSize, size - entry.localHeaderOffset);
  let local = await read(entry.localHeaderOffset, guess);
  const headerLength = localHeaderLength(local);
  const needed = headerLength + entry.compressedSize;
  if (needed > local.length) local = Buffer.concat([local, await read(entry.localHeaderOffset + local.length, needed - local.length)]);
  return extractEntryData(entry, local.subarray(headerLength, needed));
}

/** A RangeSource over bytes in memory (tests, and zips already at hand). Counts what it hands out. */
export function bufferRangeSource(buf: Buffer): RangeSource & { requests: number; bytesRead: number } {
  const src = {
    requests: 0,
    bytesRead: 0,
    async tail(length: number) {
      src.requests++;
      const bytes = buf.subarray(Math.max(0, buf.length - length));
      src.bytesRead += bytes.length;
      return { bytes, size: buf.length };
    },
    async read(start: number, length: number) {
      src.requests++;
      const bytes = buf.subarray(start, start + length);
      src.bytesRead += bytes.length;
      return bytes;
    },
  };
  return src;
}
