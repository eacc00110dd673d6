import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PagesJsonlError } from '../domain/pages-jsonl.ts';
import { MAX_PAGE_TEXT_BYTES, MAX_PAGE_TITLE_BYTES } from '../domain/page-text.ts';
import { MAX_BULK_BYTES, oversized, splitForBulk, type BulkLimits } from './bulk-batches.ts';
import { bulkEntry } from './bulk-send.ts';
import { bulkItemFailure, readFailure, storedReason, UnindexableError } from './index-failure.ts';
import { ZipError } from './zip-range.ts';

const item = (id: number, bytes: number) => ({ id, bytes });
const limits: fc.Arbitrary<BulkLimits> = fc.record({ maxBytes: fc.integer({ min: 1, max: 500 }), maxDocs: fc.integer({ min: 1, max: 8 }) });
const items = fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 60 }).map((sizes) => sizes.map((b, i) => item(i, b)));
const sum = (batch: { bytes: number }[]): number => batch.reduce((n, x) => n + x.bytes, 0);

describe('splitForBulk', () => {
  it('keeps every item once, in order; no batch is past a limit unless it is one oversized item; a full batch could not take the next', () => {
    fc.assert(
      fc.property(items, limits, (xs, l) => {
        const { full, rest } = splitForBulk(xs, l);
        expect([...full.flat(), ...rest]).toEqual(xs);
        for (const batch of [...full, rest]) {
          expect(batch.length).toBeLessThanOrEqual(l.maxDocs);
          if (batch.length > 1) expect(sum(batch)).toBeLessThanOrEqual(l.maxBytes);
          if (batch.length === 1 && sum(batch) > l.maxBytes) expect(oversized(batch[0]!, l)).toBe(true);
        }
        for (const [i, batch] of full.entries()) {
          const next = (full[i + 1] ?? rest)[0]!;
          expect(batch.length === l.maxDocs || sum(batch) + next.bytes > l.maxBytes).toBe(true);
        }
        if (xs.length > 0) expect(rest.length).toBeGreaterThan(0);
      }),
    );
  });

  it('carried over, what is left joins what comes next: the same batches as splitting all at once', () => {
    fc.assert(
      fc.property(items, items, limits, (a, b, l) => {
        const first = splitForBulk(a, l);
        const second = splitForBulk([...first.rest, ...b.map((x) => item(x.id + 1000, x.bytes))], l);
        const once = splitForBulk([...a, ...b.map((x) => item(x.id + 1000, x.bytes))], l);
        expect([...first.full, ...second.full]).toEqual(once.full);
        expect(second.rest).toEqual(once.rest);
      }),
    );
  });

  it('250 archives of a 1 MB page go out in requests of at most 8 MiB, never one of 250 MB', () => {
    const { full, rest } = splitForBulk(
      Array.from({ length: 250 }, (_, i) => item(i, 1_000_100)),
      { maxBytes: MAX_BULK_BYTES, maxDocs: 1000 },
    );
    expect(full.every((b) => sum(b) <= MAX_BULK_BYTES && b.length === 8)).toBe(true);
    expect(full.length * 8 + rest.length).toBe(250);
  });
});

describe('bulkEntry', () => {
  it('measures the bytes it sends, and a page at both caps fits one request even when every character is escaped', () => {
    const doc = {
      archiveId: 'a',
      position: 0,
      url: 'https://x.test/',
      title: '\u0001'.repeat(MAX_PAGE_TITLE_BYTES),
      text: '\u0001'.repeat(MAX_PAGE_TEXT_BYTES),
      capturedAt: '2024-05-01T00:00:00.000Z',
    };
    const e = bulkEntry('idx', 'a:0', doc);
    expect(e.bytes).toBe(Buffer.byteLength(e.ndjson));
    expect(e.ndjson.split('\n').map((l) => (l === '' ? l : JSON.parse(l)))).toEqual([{ index: { _index: 'idx', _id: 'a:0' } }, doc, '']);
    expect(e.bytes).toBeGreaterThan(6 * MAX_PAGE_TEXT_BYTES);
    expect(oversized(e, { maxBytes: MAX_BULK_BYTES, maxDocs: 1 })).toBe(false);
  });
});

describe('index failures', () => {
  it('the archive is the cause of a bad zip, bad pages, no pages, a missing object; not of a store that cannot be reached', () => {
    expect(readFailure(new ZipError('not a zip file')).permanent).toBe(true);
    expect(readFailure(new PagesJsonlError(2, 'not JSON')).permanent).toBe(true);
    expect(readFailure(new UnindexableError('no pages')).permanent).toBe(true);
    const missing = Object.assign(new Error('The specified key does not exist.'), { name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } });
    expect(readFailure(missing)).toEqual({ permanent: true, error: new Error('the WACZ is not in the store (The specified key does not exist.)') });
    expect(readFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })).permanent).toBe(false);
    expect(readFailure(Object.assign(new Error('slow down'), { $metadata: { httpStatusCode: 503 } })).permanent).toBe(false);
  });

  it('a document OpenSearch refuses is the archive, unless OpenSearch was busy (429) or failed (5xx)', () => {
    expect(bulkItemFailure(3, 400, { type: 'mapper_parsing_exception', reason: 'bad' })).toEqual({
      permanent: true,
      error: new Error('OpenSearch refused page 3: mapper_parsing_exception: bad'),
    });
    for (const status of [429, 500, 503, undefined]) expect(bulkItemFailure(0, status, { type: 't', reason: 'r' }).permanent, String(status)).toBe(false);
  });

  it('a stored reason has no NUL and is bounded', () => {
    expect(storedReason('a\u0000b')).toBe('a\ufffdb');
    expect(storedReason('x'.repeat(5000))).toHaveLength(1000);
    expect(storedReason('short')).toBe('short');
  });
});
