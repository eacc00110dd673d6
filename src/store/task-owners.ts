// Task ids are one global namespace (capture_submissions and archives are keyed by them), and a
// reporter can compute another crawl's. A level may name only task ids the ledger has on record
// for nothing but this crawl and level: never one another crawl or another level already holds.
import { sql, type RawBuilder } from 'kysely';
import type { Queryable } from '../db/connect.ts';

/**
 * Of `taskIds`, those the ledger holds for another crawl (a submission, or an archive without a
 * submission of this crawl) or for another crawl or level (a crawl page).
 */
export async function foreignTaskIds(db: Queryable, crawlId: string, depth: number, taskIds: readonly string[]): Promise<Set<string>> {
  const ids = [...new Set(taskIds)];
  if (ids.length === 0) return new Set();
  const { rows } = await heldElsewhere(crawlId, depth, sql`${ids}::text[]`).execute(db);
  return new Set(rows.map((r) => r.task_id));
}

/**
 * foreignTaskIds of every task id the level's stored report names, read from the report in the
 * same statement: admission asks it beside its read of the report instead of after it (at 10,000
 * pages the two took some 25 ms each, one after the other). `reportId` is the report the ids came
 * from (undefined: the level has none); the caller holds it to the report it read.
 */
export async function foreignTaskIdsOfReport(db: Queryable, crawlId: string, depth: number): Promise<{ reportId: string | undefined; foreign: Set<string> }> {
  const { rows } = await sql<{ report_id: string | null; foreign: string[] | null }>`
    WITH report AS (SELECT report_id, body FROM crawl_level_reports WHERE crawl_id = ${crawlId}::uuid AND depth = ${depth}),
    named AS (
      SELECT DISTINCT p->>'taskId' AS task_id FROM report, jsonb_array_elements(report.body->'pages') AS p
      WHERE jsonb_typeof(p->'taskId') = 'string'),
    held AS (${heldElsewhere(crawlId, depth, sql`ARRAY(SELECT task_id FROM named)`)})
    SELECT (SELECT report_id FROM report) AS report_id, (SELECT array_agg(task_id) FROM held) AS foreign
  `.execute(db);
  const row = rows[0];
  return { reportId: row?.report_id ?? undefined, foreign: new Set(row?.foreign ?? []) };
}

/** The task ids of `ids` (a text[]) held for another crawl, or another crawl or level. */
function heldElsewhere(crawlId: string, depth: number, ids: RawBuilder<unknown>): RawBuilder<{ task_id: string }> {
  return sql<{ task_id: string }>`
    SELECT s.task_id FROM capture_submissions s
      WHERE s.task_id = ANY(${ids}) AND s.crawl_id IS DISTINCT FROM ${crawlId}::uuid
    UNION
    SELECT p.task_id FROM crawl_pages p
      WHERE p.task_id = ANY(${ids}) AND (p.crawl_id <> ${crawlId}::uuid OR p.depth <> ${depth})
    UNION
    SELECT a.task_id FROM archives a
      WHERE a.task_id = ANY(${ids})
        AND NOT EXISTS (SELECT 1 FROM capture_submissions s WHERE s.task_id = a.task_id AND s.crawl_id = ${crawlId}::uuid)`;
}
