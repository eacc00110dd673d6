// Which archive needs which (archive_requires, migration 0012): what signing hands replay beside an
// archive, and what refuses deleting an archive others need.
import { sql } from 'kysely';
import type { Db, Queryable } from '../db/connect.ts';

export interface RequiredArchive {
  id: string;
  bucket: string;
  objectKey: string;
  /** the version its capture wrote (archives.object_version) */
  objectVersion: string | null;
}

/** The archives `id` requires that are in the ledger, and how many it names that are not. */
export async function requiredArchives(db: Db, id: string): Promise<{ found: RequiredArchive[]; unresolved: number }> {
  const rows = await db
    .selectFrom('archive_requires as e')
    .leftJoin('archives as a', 'a.id', 'e.required_id')
    .select(['a.id', 'a.bucket', 'a.object_key', 'a.object_version'])
    .where('e.archive_id', '=', id)
    .orderBy('e.object_key')
    .execute();
  const found = rows.flatMap((r) =>
    r.id === null || r.bucket === null || r.object_key === null
      ? []
      : [{ id: r.id, bucket: r.bucket, objectKey: r.object_key, objectVersion: r.object_version }],
  );
  return { found, unresolved: rows.length - found.length };
}

export interface RequiringArchive {
  id: string;
  url: string;
  objectKey: string;
}

/**
 * The archives that require `id`, oldest first. Resolved edges only: an unresolved one names a key
 * of no archive of its own crawl, and must not let another crawl's manifest pin this archive.
 */
export async function archivesRequiring(q: Queryable, id: string): Promise<RequiringArchive[]> {
  const { rows } = await sql<{ id: string; url: string; object_key: string }>`
    SELECT d.id, d.url, d.object_key FROM archive_requires e JOIN archives d ON d.id = e.archive_id
    WHERE e.required_id = ${id}::uuid
    ORDER BY d.captured_at, d.id
  `.execute(q);
  return rows.map((r) => ({ id: r.id, url: r.url, objectKey: r.object_key }));
}
