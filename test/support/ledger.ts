// Ledger fixtures for integration tests: a finished crawl (capture_job tuples), archives (parent
// tuple) with real WACZ objects in the bucket, written the way the ledger writes them — row and
// outbox tuples in one transaction — then delivered with drainOutbox.
import { randomBytes, randomUUID } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { OpenFgaClient } from '@openfga/sdk';
import type { Db } from '../../src/db/connect.ts';
import { sql, type Transaction } from 'kysely';
import type { Archive, Database } from '../../src/db/types.ts';
import { drainOutbox, enqueueTuples } from '../../src/fga/outbox.ts';
import { archiveTuples, jobTuples } from '../../src/fga/tuples.ts';
import { oneResponseWacz } from './wacz.ts';

/** A finished crawl row plus its capture_job owner/parent tuples (queued). Returns the crawl id. */
export async function insertJob(db: Db, opts: { orgId: string; submittedBy: string; crawlId?: string }): Promise<string> {
  const crawlId = opts.crawlId ?? randomUUID();
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('crawls')
      .values({
        id: crawlId,
        org_id: opts.orgId,
        submitted_by: opts.submittedBy,
        state: 'succeeded',
        stop_reason: 'completed',
        seeds: ['https://example.test/'],
        rules: JSON.stringify([]),
        max_depth: 0,
        max_pages: 1,
        per_host_delay_ms: 0,
        host_parallelism: 1,
        formats: ['wacz'],
        finished_at: new Date(),
      })
      .execute();
    await enqueueTuples(trx, jobTuples(crawlId, opts.submittedBy, opts.orgId));
  });
  return crawlId;
}

/** A small but real WACZ: one HTML page titled `text`, whose body says `text` unless `html` is given. */
export async function makeWacz(
  url: string,
  text: string,
  when = new Date(),
  html = `<!doctype html><html><head><title>${text}</title></head><body><h1>${text}</h1><p>captured for a capture-ledger test</p></body></html>`,
): Promise<Buffer> {
  return oneResponseWacz({
    software: 'capture-ledger tests',
    created: when,
    pages: [{ url, title: text, text, ts: when }],
    body: Buffer.from(html, 'utf8'),
    contentType: 'text/html; charset=utf-8',
  });
}

export interface ArchiveFixture {
  crawlId: string;
  capturedAt?: Date;
  url?: string;
  bucket: string;
  objectKey?: string;
  /** upload these bytes to the bucket at objectKey (omit to write the row only) */
  body?: Buffer;
  s3?: S3Client;
}

/** One archive row and its parent tuple (queued) in one transaction; optionally its object. */
export async function insertArchive(db: Db, f: ArchiveFixture): Promise<Archive> {
  const id = randomUUID();
  const objectKey = f.objectKey ?? `test/${f.crawlId}/${id}.wacz`;
  if (f.body !== undefined) {
    if (f.s3 === undefined) throw new Error('insertArchive: body given without s3');
    await f.s3.send(new PutObjectCommand({ Bucket: f.bucket, Key: objectKey, Body: f.body, ContentType: 'application/wacz' }));
  }
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('archives')
      .values({
        id,
        task_id: `task-${randomBytes(8).toString('hex')}`,
        bucket: f.bucket,
        object_key: objectKey,
        url: f.url ?? 'https://example.test/',
        final_url: f.url ?? 'https://example.test/',
        sha256: null,
        size: f.body?.length ?? null,
        provenance: JSON.stringify({ fixture: true }),
        captured_at: f.capturedAt ?? new Date(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await enqueueTuples(trx, archiveTuples(id, f.crawlId));
    await reportedFor(trx, f.crawlId, [{ taskId: row.task_id, url: row.url }]);
    return row;
  });
}

/**
 * The capture_submissions rows a real admission writes next to its archives (task -> crawl, org,
 * submitter), so fixtures are reachable the way the listing reaches archives for callers who see
 * few crawls. Nothing is written when the crawl row does not exist.
 */
export async function reportedFor(db: Db | Transaction<Database>, crawlId: string, tasks: { taskId: string; url: string }[]): Promise<void> {
  if (tasks.length === 0) return;
  await db
    .insertInto('capture_submissions')
    .columns(['task_id', 'org_id', 'submitted_by', 'crawl_id', 'url'])
    .expression(
      db
        .selectFrom('crawls')
        .innerJoin(
          sql<{
            task_id: string;
            url: string;
          }>`(SELECT unnest(${tasks.map((t) => t.taskId)}::text[]) AS task_id, unnest(${tasks.map((t) => t.url)}::text[]) AS url)`.as('t'),
          (j) => j.onTrue(),
        )
        .select(['t.task_id', 'crawls.org_id', 'crawls.submitted_by', 'crawls.id', 't.url'])
        .where('crawls.id', '=', crawlId),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** Many archive rows for one crawl in one statement (no objects), tuples queued; newest first by index. */
export async function insertManyArchives(db: Db, crawlId: string, bucket: string, count: number, start = new Date()): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; offset < count; offset += 1000) {
    const n = Math.min(1000, count - offset);
    const rows = Array.from({ length: n }, (_, i) => {
      const id = randomUUID();
      ids.push(id);
      return {
        id,
        task_id: `task-${id}`,
        bucket,
        object_key: `bulk/${crawlId}/${id}.wacz`,
        url: `https://example.test/${offset + i}`,
        final_url: null,
        sha256: null,
        size: null,
        provenance: JSON.stringify({}),
        captured_at: new Date(start.getTime() - (offset + i) * 1000),
      };
    });
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('archives').values(rows).execute();
      await reportedFor(
        trx,
        crawlId,
        rows.map((r) => ({ taskId: r.task_id, url: r.url })),
      );
      await enqueueTuples(
        trx,
        rows.flatMap((r) => archiveTuples(r.id, crawlId)),
      );
    });
  }
  return ids;
}

/** Deliver everything queued; throws if anything stayed behind. */
export async function drain(db: Db, fga: OpenFgaClient): Promise<number> {
  const r = await drainOutbox(db, fga);
  if (r.failed > 0 || r.unavailable !== undefined || r.remaining > 0) throw new Error(`outbox drain incomplete: ${JSON.stringify(r)}`);
  return r.delivered;
}
