// Record-at-a-time gzip (WARC 1.1 annex D): a .warc.gz is one gzip member per record, so a reader
// can range-read one record by the offset and length of its member, as the CDXJ index gives them.
// Pure: bytes in, bytes out.
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';

const ID1 = 0x1f;
const ID2 = 0x8b;
const CM_DEFLATE = 8;
const FLAGS = { text: 1, hcrc: 2, extra: 4, name: 8, comment: 16 } as const;
const HEADER_BYTES = 10;
const TRAILER_BYTES = 8;
/** OS byte 255 (unknown): the member is the same bytes wherever it is written */
const OS_UNKNOWN = 255;

/** One gzip member holding `data`: a 10-byte header with no name or time, raw deflate, CRC-32 and size. */
export function gzipMember(data: Buffer): Buffer {
  const header = Buffer.from([ID1, ID2, CM_DEFLATE, 0, 0, 0, 0, 0, 0, OS_UNKNOWN]);
  const trailer = Buffer.alloc(TRAILER_BYTES);
  trailer.writeUInt32LE(crc32(data), 0);
  trailer.writeUInt32LE(data.length % 2 ** 32, 4);
  return Buffer.concat([header, deflateRawSync(data, { level: 9, memLevel: 9 }), trailer]);
}

export interface GzipMember {
  /** where the member starts in the file, and its length in bytes (header to trailer) */
  offset: number;
  length: number;
  data: Buffer;
}

/** Skips a zero-terminated header field (FNAME, FCOMMENT). */
function skipZeroTerminated(buf: Buffer, pos: number, at: number): number {
  const end = buf.indexOf(0, pos);
  if (end < 0) throw new Error(`gzip member at ${at}: header runs past the end`);
  return end + 1;
}

/** Where the deflate data of the member at `at` starts, past its header's optional fields. */
function dataStart(buf: Buffer, at: number): number {
  if (buf.length < at + HEADER_BYTES || buf[at] !== ID1 || buf[at + 1] !== ID2) throw new Error(`gzip member at ${at}: no gzip header`);
  if (buf[at + 2] !== CM_DEFLATE) throw new Error(`gzip member at ${at}: not deflate`);
  const flags = buf[at + 3]!;
  let pos = at + HEADER_BYTES;
  if (flags & FLAGS.extra) pos += 2 + buf.readUInt16LE(pos);
  if (flags & FLAGS.name) pos = skipZeroTerminated(buf, pos, at);
  if (flags & FLAGS.comment) pos = skipZeroTerminated(buf, pos, at);
  if (flags & FLAGS.hcrc) pos += 2;
  return pos;
}

/** Reads the member at `at`; throws when it is cut short or its CRC or size is wrong. */
export function readGzipMember(buf: Buffer, at: number): GzipMember {
  const start = dataStart(buf, at);
  const { buffer: data, engine } = inflateRawSync(buf.subarray(start), { info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
  const end = start + engine.bytesWritten + TRAILER_BYTES;
  if (end > buf.length) throw new Error(`gzip member at ${at}: no trailer`);
  if (buf.readUInt32LE(end - 8) !== crc32(data) || buf.readUInt32LE(end - 4) !== data.length % 2 ** 32)
    throw new Error(`gzip member at ${at}: CRC or size does not match`);
  return { offset: at, length: end - at, data };
}

/** Every member of a file, in order. */
export function gzipMembers(buf: Buffer): GzipMember[] {
  const out: GzipMember[] = [];
  for (let at = 0; at < buf.length;) {
    const m = readGzipMember(buf, at);
    out.push(m);
    at += m.length;
  }
  return out;
}
