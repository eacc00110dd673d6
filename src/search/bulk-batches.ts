// How page documents are grouped into OpenSearch bulk requests: by bytes as well as by count.
// A node refuses a request over its http.max_content_length (100 MB by default: 413) and one past
// its indexing pressure limit (indexing_pressure.memory.limit, 10% of the heap for all bulks in
// flight: 51 MB on this stack's 512 MB node, 429); before this bound 250 archives of large pages
// made such a request on every run. Pure.

/**
 * At most this many bytes of NDJSON per bulk request: OpenSearch advises 5–15 MB bulks, six of
 * these fit in the indexing pressure limit of a 512 MB heap at once, and the largest document a
 * capped page makes (1 MB of text, at worst 6 bytes of JSON per byte of text, plus the title)
 * still fits in one.
 */
export const MAX_BULK_BYTES = 8 * 1024 * 1024;
/** and at most this many documents (small pages: the request stays quick to parse and answer) */
export const MAX_BULK_DOCS = 1000;

export interface BulkLimits {
  maxBytes: number;
  maxDocs: number;
}

export const BULK_LIMITS: BulkLimits = { maxBytes: MAX_BULK_BYTES, maxDocs: MAX_BULK_DOCS };

export interface Sized {
  /** the item's bytes in the request body */
  bytes: number;
}

/**
 * Splits `items`, in order, into full batches and the rest. A batch is full when the next item
 * would take it past either limit; the rest is what does not yet fill one, to be sent with what
 * comes after it (or alone, last). An item larger than maxBytes by itself is a batch of its own:
 * the caller decides whether to send it (oversized).
 */
export function splitForBulk<T extends Sized>(items: readonly T[], limits: BulkLimits): { full: T[][]; rest: T[] } {
  const full: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (batch.length > 0 && (bytes + item.bytes > limits.maxBytes || batch.length >= limits.maxDocs)) {
      full.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += item.bytes;
  }
  return { full, rest: batch };
}

/** Whether one item alone is past the byte limit (it could never be sent in a request that size). */
export const oversized = (item: Sized, limits: BulkLimits): boolean => item.bytes > limits.maxBytes;
