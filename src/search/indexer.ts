// Indexing: read pages/pages.jsonl out of each WACZ (ranged reads, never the whole file), write one
// document per page, then set archives.indexed_at. That column is the only index state: nothing
// else decides what is indexed, so `UPDATE archives SET indexed_at = NULL` followed by indexing
// rebuilds everything. An archive is marked only after OpenSearch accepted every one of its pages;
// one that fails for now stays unindexed and is tried again next time, and one that cannot be
// indexed as it is is marked too, with its reason in archives.index_error (index-failure.ts), so
// no archive fails every run, and a rebuild (after a mapping change, say) tries it again. Marking
// happens after the refresh, so an archive whose indexed_at is set and index_error is not is
// searchable.
//
// Bounded: pages.jsonl is read only up to MAX_PAGES_JSONL_BYTES, text and title are cut to the
// capture's caps again (src/domain/page-text.ts: a WACZ may come from another capturer), and the
// documents go out in bulk requests bounded by bytes and count (bulk-batches.ts), carried over
// from one group of reads to the next so small pages still fill a request.
import type { S3Client } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import type { Db } from '../db/connect.ts';
import { MAX_PAGE_TEXT_BYTES, MAX_PAGE_TITLE_BYTES, utf8Prefix } from '../domain/page-text.ts';
import { parsePagesJsonl, type ParsedPages } from '../domain/pages-jsonl.ts';
import { BULK_LIMITS, oversized, splitForBulk, type BulkLimits } from './bulk-batches.ts';
import { bulkEntry, sendBulk, type BulkEntry } from './bulk-send.ts';
import type { SearchIndex } from './client.ts';
import { readFailure, storedReason, UnindexableError, type IndexFailure } from './index-failure.ts';
import { documentId, ensureIndex, type PageDocument } from './schema.ts';
import { mapLimit } from '../domain/map-limit.ts';
import { s3RangeSource } from './s3-range.ts';
import { withheldFromProvenance } from './types.ts';
import { readZipEntry } from './zip-range.ts';

export const PAGES_ENTRY = 'pages/pages.jsonl';
/**
 * The largest pages/pages.jsonl read. One page of this flow's capture is at most about 1 MB of
 * text (6 MB were every character a JSON escape); the rest are WACZs of many pages from elsewhere.
 * READ_CONCURRENCY reads of this size are what indexing holds at most.
 */
export const MAX_PAGES_JSONL_BYTES = 8 * 1024 * 1024;

export interface IndexDeps {
  db: Db;
  s3: S3Client;
  search: SearchIndex;
  /** told about each archive that could not be indexed; `marked`: its index_error was set, it is not tried again until a rebuild */
  onFailure?: (archiveId: string, error: Error, marked: boolean) => void;
  /** default BULK_LIMITS */
  bulk?: BulkLimits;
}

export interface IndexResult {
  /** archives indexed (and marked) by this call */
  indexed: number;
  /** page documents written for them */
  pages: number;
  /** archives that could not be indexed: those failed for now keep indexed_at NULL, those marked get it with an index_error */
  failed: number;
}

export interface ArchiveToIndex {
  id: string;
  bucket: string;
  object_key: string;
  /** the version its capture wrote: the one indexed */
  object_version: string | null;
  provenance: Record<string, unknown>;
  captured_at: Date;
  /** the crawl it was reported for (capture_submissions.crawl_id), the capture_job its OpenFGA parent names */
  crawl_id: string | null;
}

/**
 * One document per page line, in file order, text and title cut to the capture's caps.
 * textWithheld is the page line's own when it has one, else the manifest's documentWithheld that
 * admission kept in provenance. Pure.
 */
export function pageDocuments(archive: Pick<ArchiveToIndex, 'id' | 'provenance' | 'captured_at' | 'crawl_id'>, parsed: ParsedPages): PageDocument[] {
  const archiveWithheld = withheldFromProvenance(archive.provenance);
  const capturedAt = archive.captured_at.toISOString();
  return parsed.pages.map((p, position) => {
    const doc: PageDocument = { archiveId: archive.id, position, url: p.url, capturedAt };
    if (archive.crawl_id !== null) doc.crawlId = archive.crawl_id;
    if (p.title !== undefined) doc.title = utf8Prefix(p.title, MAX_PAGE_TITLE_BYTES);
    if (p.text !== undefined) doc.text = utf8Prefix(p.text, MAX_PAGE_TEXT_BYTES);
    const textWithheld = p.textWithheld ?? archiveWithheld;
    if (textWithheld !== undefined) doc.textWithheld = textWithheld;
    if (p.ts !== undefined) doc.ts = p.ts;
    return doc;
  });
}

/**
 * pages/pages.jsonl of one WACZ in S3, parsed. Throws UnindexableError (or ZipError,
 * PagesJsonlError) when the object is not a WACZ with pages of at most MAX_PAGES_JSONL_BYTES.
 */
export async function readArchivePages(s3: S3Client, bucket: string, key: string, versionId?: string | null): Promise<ParsedPages> {
  const bytes = await readZipEntry(s3RangeSource(s3, bucket, key, versionId), PAGES_ENTRY, { maxSize: MAX_PAGES_JSONL_BYTES });
  if (bytes === undefined) throw new UnindexableError(`s3://${bucket}/${key} has no ${PAGES_ENTRY}`);
  return parsePagesJsonl(bytes.toString('utf8'));
}

// the S3 client keeps at most 50 sockets per host; an object store answers many small GETs at once
const READ_CONCURRENCY = 48;

type Prepared = { archive: ArchiveToIndex; entries: BulkEntry[] } | { archive: ArchiveToIndex; failure: IndexFailure };

/** One archive's bulk entries, or why it cannot be indexed (a document no bulk request may hold is the archive's fault). */
async function prepare(deps: IndexDeps, a: ArchiveToIndex, limits: BulkLimits): Promise<Prepared> {
  let docs: PageDocument[];
  try {
    docs = pageDocuments(a, await readArchivePages(deps.s3, a.bucket, a.object_key, a.object_version));
  } catch (err) {
    return { archive: a, failure: readFailure(err) };
  }
  const entries = docs.map((d) => bulkEntry(deps.search.index, documentId(d.archiveId, d.position), d));
  const big = entries.find((e) => oversized(e, limits));
  if (big === undefined) return { archive: a, entries };
  return {
    archive: a,
    failure: { error: new Error(`page ${big.position}'s document is ${big.bytes} bytes, more than the ${limits.maxBytes} of a bulk request`), permanent: true },
  };
}

/**
 * Indexes these archives: read, bulk-write, mark. Returns what was done; never throws for one bad
 * archive (it is counted in `failed`, marked when it is the cause, and reported to onFailure), but
 * does throw when OpenSearch or Postgres cannot be reached at all.
 */
export async function indexArchives(deps: IndexDeps, archives: ArchiveToIndex[]): Promise<IndexResult> {
  const result: IndexResult = { indexed: 0, pages: 0, failed: 0 };
  if (archives.length === 0) return result;
  await ensureIndex(deps.search);
  const limits = deps.bulk ?? BULK_LIMITS;
  const failures = new Map<string, IndexFailure>();
  const refused = (id: string, f: IndexFailure): void => {
    // the first reason an archive was refused for is the one kept; one that is for good wins
    const seen = failures.get(id);
    if (seen === undefined || (!seen.permanent && f.permanent)) failures.set(id, f);
  };
  const pagesOf = new Map<string, number>();
  let pending: BulkEntry[] = [];
  for (let start = 0; start < archives.length; start += READ_CONCURRENCY) {
    const group = await mapLimit(archives.slice(start, start + READ_CONCURRENCY), READ_CONCURRENCY, (a) => prepare(deps, a, limits));
    for (const p of group) {
      if ('failure' in p) refused(p.archive.id, p.failure);
      else {
        pagesOf.set(p.archive.id, p.entries.length);
        for (const e of p.entries) pending.push(e);
      }
    }
    const { full, rest } = splitForBulk(pending, limits);
    for (const batch of full) await sendBulk(deps.search, batch, refused);
    pending = rest;
  }
  await sendBulk(deps.search, pending, refused);

  const written = [...pagesOf.keys()].filter((id) => !failures.has(id));
  for (const id of written) result.pages += pagesOf.get(id)!;
  await recordFailures(deps, failures);
  result.failed = failures.size;
  if (written.length === 0) return result;
  // Searchable first, marked second: an archive with indexed_at set can be found. A crash in
  // between leaves documents whose archive is unmarked; the next run rewrites them (same ids).
  if (result.pages > 0) await deps.search.client.indices.refresh({ index: deps.search.index });
  for (let i = 0; i < written.length; i += 1000) {
    await deps.db
      .updateTable('archives')
      .set({ indexed_at: sql<Date>`now()`, index_error: null })
      .where('id', 'in', written.slice(i, i + 1000))
      .execute();
  }
  result.indexed = written.length;
  return result;
}

/** Marks the archives that are the cause of their failure, with the reason, and tells onFailure of every one. */
async function recordFailures(deps: IndexDeps, failures: Map<string, IndexFailure>): Promise<void> {
  for (const [id, f] of failures) {
    if (f.permanent)
      await deps.db
        .updateTable('archives')
        .set({ indexed_at: sql<Date>`now()`, index_error: storedReason(f.error.message) })
        .where('id', '=', id)
        .execute();
    deps.onFailure?.(id, f.error, f.permanent);
  }
}

const archiveColumns = [
  'archives.id',
  'archives.bucket',
  'archives.object_key',
  'archives.object_version',
  'archives.provenance',
  'archives.captured_at',
  's.crawl_id',
] as const;

/** archives with the crawl each was reported for (task_id is capture_submissions' key: one row at most) */
const archivesWithCrawl = (db: Db) => db.selectFrom('archives').leftJoin('capture_submissions as s', 's.task_id', 'archives.task_id');

/** The crawl's archives that are not indexed yet: archives.task_id = crawl_pages.task_id. */
export async function unindexedArchivesOfCrawl(db: Db, crawlId: string): Promise<ArchiveToIndex[]> {
  return archivesWithCrawl(db)
    .select(archiveColumns)
    .where('archives.indexed_at', 'is', null)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('crawl_pages')
          .select(sql`1`.as('one'))
          .whereRef('crawl_pages.task_id', '=', 'archives.task_id')
          .where('crawl_pages.crawl_id', '=', crawlId),
      ),
    )
    .orderBy('archives.captured_at')
    .orderBy('archives.id')
    .execute();
}

/** Indexes one crawl's unindexed archives. What POST /api/crawls/:id/index and the crawl workflow run. */
export async function indexCrawl(deps: IndexDeps, crawlId: string): Promise<IndexResult> {
  return indexArchives(deps, await unindexedArchivesOfCrawl(deps.db, crawlId));
}

/**
 * Indexes every archive with indexed_at NULL, in batches — the second half of the rebuild
 * (`UPDATE archives SET indexed_at = NULL`). Walks by id (not by captured_at, whose microseconds a
 * JS Date cannot hold), so an archive that fails for now is passed over rather than retried
 * forever within one run; one that cannot be indexed is marked and left out of later runs.
 */
export async function indexPending(deps: IndexDeps, opts: { batch?: number } = {}): Promise<IndexResult> {
  const batch = opts.batch ?? 1000;
  const total: IndexResult = { indexed: 0, pages: 0, failed: 0 };
  let after: string | undefined;
  for (;;) {
    let q = archivesWithCrawl(deps.db).select(archiveColumns).where('archives.indexed_at', 'is', null);
    if (after !== undefined) q = q.where('archives.id', '>', after);
    const rows = await q.orderBy('archives.id').limit(batch).execute();
    if (rows.length === 0) return total;
    const r = await indexArchives(deps, rows);
    total.indexed += r.indexed;
    total.pages += r.pages;
    total.failed += r.failed;
    after = rows[rows.length - 1]!.id;
    if (rows.length < batch) return total;
  }
}
