// A RangeSource over one S3 object: every read is a ranged GET, so reading pages/pages.jsonl out
// of a WACZ costs a few kilobytes whatever the size of its WARCs.
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { RangeSource } from './zip-range.ts';

export interface CountingRangeSource extends RangeSource {
  /** GETs made so far */
  requests: number;
  /** body bytes received so far */
  bytesRead: number;
}

function parseTotal(contentRange: string | undefined): number | undefined {
  const m = contentRange === undefined ? null : /\/(\d+)\s*$/.exec(contentRange);
  return m ? Number(m[1]) : undefined;
}

/** versionId: that version of the object (archives.object_version), else the key as it is */
export function s3RangeSource(s3: S3Client, bucket: string, key: string, versionId?: string | null): CountingRangeSource {
  const get = async (range: string): Promise<{ bytes: Buffer; total: number | undefined }> => {
    src.requests++;
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: range, ...(versionId != null ? { VersionId: versionId } : {}) }));
    const bytes = Buffer.from((await res.Body?.transformToByteArray()) ?? new Uint8Array());
    src.bytesRead += bytes.length;
    // 206 carries the total in Content-Range; a 200 (range not honoured / whole object) is the total.
    return { bytes, total: parseTotal(res.ContentRange) ?? (res.ContentRange === undefined ? bytes.length : undefined) };
  };
  const src: CountingRangeSource = {
    requests: 0,
    bytesRead: 0,
    async tail(length) {
      try {
        const { bytes, total } = await get(`bytes=-${length}`);
        if (total === undefined) throw new Error(`s3://${bucket}/${key}: no object size in the response to a ranged GET`);
        // a store that ignored the range sent everything; keep only the tail asked for
        return { bytes: bytes.length > length ? bytes.subarray(bytes.length - length) : bytes, size: total };
      } catch (err) {
        // an empty object has no satisfiable range
        if ((err as { name?: string }).name === 'InvalidRange') return { bytes: Buffer.alloc(0), size: 0 };
        throw err;
      }
    },
    async read(start, length) {
      if (length === 0) return Buffer.alloc(0);
      const { bytes } = await get(`bytes=${start}-${start + length - 1}`);
      return bytes;
    },
  };
  return src;
}
