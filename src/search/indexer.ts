// Indexing: read pages/pages.jsonl out of each WACZ (ranged reads, never the whole file), write one
// document per page, then set archives.indexed_at. That column is the only index state: nothing
// else records what was indexed, so `UPDATE archives SET indexed_at = NULL` followed by indexing
// rebuilds everything. An archive is marked only after OpenSearch accepted every one of its pages;
// one that fails stays unindexed and is tried again next time. Marking happens after the refresh,
// so an archive whose indexed_at is set is already searchable.
import type { S3Client } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import type { Db } from '../db/connect.ts';
import { parsePagesJsonl, type ParsedPages } from '../domain/pages-jsonl.ts';
import type { SearchIndex } from './client.ts';
import { documentId, ensureIndex, type PageDocument } from './schema.ts';
import { mapLimit } from '../domain/map-limit.ts';
import { s3RangeSource } from './s3-range.ts';
import { withheldFromProvenance } from './types.ts';
import { readZipEntry } from './zip-range.ts';

export const PAGES_ENTRY = 'pages/pages.jsonl';

export interface IndexDeps {
  db: Db;
  s3: S3Client;
  search: SearchIndex;
  /** told about each archive that could not be indexed (it stays unindexed) */
  onFailure?: (archiveId: string, error: Error) => void;
}

export interface IndexResult {
  /** archives indexed (and marked) by this call */
  indexed: number;
  /** page documents written for them */
  pages: number;
  /** archives that could not be indexed; they keep indexed_at NULL */
  failed: number;
}

export interface ArchiveToIndex {
  id: string;
  bucket: string;
  object_key: string;
  provenance: Record<string, unknown>;
  captured_at: Date;
}

/**
 * One document per page line, in file order. textWithheld is the page line's own when it has one,
 * else the manifest's documentWithheld that admission kept in provenance. Pure.
 */
export function pageDocuments(archive: Pick<ArchiveToIndex, 'id' | 'provenance' | 'captured_at'>, parsed: ParsedPages): PageDocument[] {
  const archiveWithheld = withheldFromProvenance(archive.provenance);
  const capturedAt = archive.captured_at.toISOString();
  return parsed.pages.map((p, position) => {
    const doc: PageDocument = { archiveId: archive.id, position, url: p.url, capturedAt };
    if (p.title !== undefined) doc.title = p.title;
    if (p.text !== undefined) doc.text = p.text;
    const textWithheld = p.textWithheld ?? archiveWithheld;
    if (textWithheld !== undefined) doc.textWithheld = textWithheld;
    if (p.ts !== undefined) doc.ts = p.ts;
    return doc;
  });
}

/** pages/pages.jsonl of one WACZ in S3, parsed. Throws when the object is not a WACZ with pages. */
export async function readArchivePages(s3: S3Client, bucket: string, key: string): Promise<ParsedPages> {
  const bytes = await readZipEntry(s3RangeSource(s3, bucket, key), PAGES_ENTRY);
  if (bytes === undefined) throw new Error(`s3://${bucket}/${key} has no ${PAGES_ENTRY}`);
  return parsePagesJsonl(bytes.toString('utf8'));
}

// the S3 client keeps at most 50 sockets per host; an object store answers many small GETs at once
const READ_CONCURRENCY = 48;
/** archives per bulk request */
const BULK_ARCHIVES = 250;

/**
 * Indexes these archives: read, bulk-write, mark. Returns what was done; never throws for one bad
 * archive (it is counted in `failed` and reported to onFailure), but does throw when OpenSearch or
 * Postgres cannot be reached at all.
 */
export async function indexArchives(deps: IndexDeps, archives: ArchiveToIndex[]): Promise<IndexResult> {
  const result: IndexResult = { indexed: 0, pages: 0, failed: 0 };
  if (archives.length === 0) return result;
  const written: string[] = [];
  await ensureIndex(deps.search);
  const fail = (id: string, err: unknown): void => {
    result.failed++;
    deps.onFailure?.(id, err instanceof Error ? err : new Error(String(err)));
  };

  for (let start = 0; start < archives.length; start += BULK_ARCHIVES) {
    const chunk = archives.slice(start, start + BULK_ARCHIVES);
    const read = await mapLimit(chunk, READ_CONCURRENCY, async (a) => {
      try {
        return { archive: a, docs: pageDocuments(a, await readArchivePages(deps.s3, a.bucket, a.object_key)) };
      } catch (err) {
        fail(a.id, err);
        return undefined;
      }
    });
    const ready = read.filter((r): r is NonNullable<typeof r> => r !== undefined);

    const body: unknown[] = [];
    for (const { docs } of ready) {
      for (const d of docs) body.push({ index: { _index: deps.search.index, _id: documentId(d.archiveId, d.position) } }, d);
    }
    const rejected = new Map<string, string>();
    if (body.length > 0) {
      const res = await deps.search.client.bulk({ body: body as never, filter_path: ['errors', 'items.*.error', 'items.*._id'] });
      if (res.body.errors) {
        for (const item of res.body.items ?? []) {
          const op = Object.values(item)[0] as { _id?: string; error?: { type?: string; reason?: string } } | undefined;
          if (op?.error && op._id) {
            const archiveId = op._id.slice(0, op._id.lastIndexOf(':'));
            if (!rejected.has(archiveId)) rejected.set(archiveId, `${op.error.type}: ${op.error.reason}`);
          }
        }
      }
    }

    for (const [id, reason] of rejected) fail(id, new Error(`OpenSearch refused a page: ${reason}`));
    for (const d of ready) {
      if (rejected.has(d.archive.id)) continue;
      written.push(d.archive.id);
      result.pages += d.docs.length;
    }
  }
  if (written.length === 0) return result;
  // Searchable first, marked second: an archive with indexed_at set can be found. A crash in
  // between leaves documents whose archive is unmarked; the next run rewrites them (same ids).
  if (result.pages > 0) await deps.search.client.indices.refresh({ index: deps.search.index });
  for (let i = 0; i < written.length; i += 1000) {
    await deps.db
      .updateTable('archives')
      .set({ indexed_at: sql<Date>`now()` })
      .where('id', 'in', written.slice(i, i + 1000))
      .execute();
  }
  result.indexed = written.length;
  return result;
}

const archiveColumns = ['archives.id', 'archives.bucket', 'archives.object_key', 'archives.provenance', 'archives.captured_at'] as const;

/** The crawl's archives that are not indexed yet: archives.task_id = crawl_pages.task_id. */
export async function unindexedArchivesOfCrawl(db: Db, crawlId: string): Promise<ArchiveToIndex[]> {
  return db
    .selectFrom('archives')
    .select(archiveColumns)
    .where('archives.indexed_at', 'is', null)
    .where((eb) => eb.exists(eb.selectFrom('crawl_pages').select(sql`1`.as('one')).whereRef('crawl_pages.task_id', '=', 'archives.task_id').where('crawl_pages.crawl_id', '=', crawlId)))
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
 * JS Date cannot hold), so an archive that keeps failing is passed over rather than retried
 * forever within one run.
 */
export async function indexPending(deps: IndexDeps, opts: { batch?: number } = {}): Promise<IndexResult> {
  const batch = opts.batch ?? 1000;
  const total: IndexResult = { indexed: 0, pages: 0, failed: 0 };
  let after: string | undefined;
  for (;;) {
    let q = deps.db.selectFrom('archives').select(archiveColumns).where('archives.indexed_at', 'is', null);
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
