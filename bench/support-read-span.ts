// When an admission's reads began and ended (issue 28): what it does before its first read and
// after its last is time the store sits idle, added whole to the ratio, where work done while
// the level is read shares the cores with the reads.
import type { ObjectReader } from '../src/s3/object-reader.ts';
import { percentile } from './support-crawl.ts';

export interface ReadSpan {
  /** performance.now() when the first read was asked for; null before it */
  first: number | null;
  /** performance.now() when the last read to finish finished; null before it */
  last: number | null;
}

/** `reader`, its reads timed: span() is when the first began and the last ended. */
export function spanReader(reader: ObjectReader): ObjectReader & { span: () => ReadSpan } {
  const span: ReadSpan = { first: null, last: null };
  return {
    async read(bucket, key, maxBytes, versionId) {
      span.first ??= performance.now();
      try {
        return await reader.read(bucket, key, maxBytes, versionId);
      } finally {
        span.last = performance.now();
      }
    },
    close: () => reader.close(),
    span: () => ({ ...span }),
  };
}

export interface OutsideReads {
  beforeMs: number;
  afterMs: number;
}

/** ms from `start` to the first read, and from the last read's end to `end` (null: nothing was read). */
export function outsideReads(span: ReadSpan, start: number, end: number): OutsideReads | null {
  if (span.first === null || span.last === null) return null;
  return { beforeMs: Math.round((span.first - start) * 10) / 10, afterMs: Math.round((end - span.last) * 10) / 10 };
}

/** The median of each part over the levels (null when a level read nothing). */
export function medianOutside(levels: (OutsideReads | null)[]): OutsideReads | null {
  const all = levels.filter((x) => x !== null);
  if (all.length === 0 || all.length < levels.length) return null;
  const median = (part: keyof OutsideReads): number =>
    percentile(
      all.map((x) => x[part]),
      50,
    );
  return { beforeMs: median('beforeMs'), afterMs: median('afterMs') };
}
