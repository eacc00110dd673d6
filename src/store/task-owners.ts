// Task ids are one global namespace (capture_submissions and archives are keyed by them), and a
// reporter can compute another crawl's. A level may name only task ids the ledger has on record
// for nothing but this crawl and level: never one another crawl or another level already holds.
import { sql } from 'kysely';
import type { Queryable } from '../db/connect.ts';

/**
 * Of `taskIds`, those the ledger holds for another crawl (a submission, or an archive without a
 * submission of this crawl) or for another crawl or level (a crawl page).
 */
export async function foreignTaskIds(db: Queryable, crawlId: string, depth: number, taskIds: readonly string[]): Promise<Set<string>> {
  const ids = [...new Set(taskIds)];
  if (ids.length === 0) return new Set();
  const { rows } = await sql<{ task_id: string }>`
    SELECT s.task_id FROM capture_submissions s
      WHERE s.task_id = ANY(${ids}::text[]) AND s.crawl_id IS DISTINCT FROM ${crawlId}::uuid
    UNION
    SELECT p.task_id FROM crawl_pages p
      WHERE p.task_id = ANY(${ids}::text[]) AND (p.crawl_id <> ${crawlId}::uuid OR p.depth <> ${depth})
    UNION
    SELECT a.task_id FROM archives a
      WHERE a.task_id = ANY(${ids}::text[])
        AND NOT EXISTS (SELECT 1 FROM capture_submissions s WHERE s.task_id = a.task_id AND s.crawl_id = ${crawlId}::uuid)
  `.execute(db);
  return new Set(rows.map((r) => r.task_id));
}
