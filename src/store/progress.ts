// What the ledger says about a crawl's progress and pacing: per level, its pages by state; per
// host, the spacing its captures actually kept (spec "The pacing is measured, not assumed").
import { sql } from 'kysely';
import type { Db } from '../db/connect.ts';
import type { LevelCounts } from '../domain/progress.ts';
import { MAX_PAGES_SKIP } from './pages.ts';

export async function levelCounts(db: Db, crawlId: string): Promise<LevelCounts[]> {
  const { rows } = await sql<LevelCounts>`
    SELECT depth,
      count(*) FILTER (WHERE skip_reason IS DISTINCT FROM ${MAX_PAGES_SKIP})::int AS pages,
      count(*) FILTER (WHERE state = 'captured')::int AS captured,
      count(*) FILTER (WHERE state = 'failed')::int AS failed,
      count(*) FILTER (WHERE state = 'skipped' AND skip_reason IS DISTINCT FROM ${MAX_PAGES_SKIP})::int AS skipped,
      count(*) FILTER (WHERE state = 'pending')::int AS pending,
      count(*) FILTER (WHERE skip_reason = ${MAX_PAGES_SKIP})::int AS cut
    FROM crawl_pages WHERE crawl_id = ${crawlId}
    GROUP BY depth ORDER BY depth
  `.execute(db);
  return rows;
}

export interface HostPacingAudit {
  host: string;
  /** captures with both timestamps (robots-skipped pages never touched the host) */
  pages: number;
  /** the smallest gap from one capture's finish to the next submit on the host; null with one page */
  minGapMs: number | null;
  /** the delay the host was owed: perHostDelayMs, or the Crawl-delay the flow reported when longer */
  effectiveDelayMs: number;
  /** gaps shorter than effectiveDelayMs */
  violations: number;
  /** negative gaps: two captures on the host overlapped */
  overlaps: number;
  /** the gaps themselves in submit order (ms, rounded down), the first PACING_GAPS_PER_HOST of them: what the picker plots */
  gapsMs: number[];
}

/** Gaps per host the pacing audit lists (a chart needs no more; the counts above cover them all). */
export const PACING_GAPS_PER_HOST = 500;

/**
 * The spec's query — lag(finished_at) over each host's pages in submit order — per host: how
 * many gaps there were, the smallest, and how many fell short of the host's delay. Every level of
 * the crawl is one sequence per host, so spacing across levels is audited too.
 */
export async function pacingAudit(db: Db, crawlId: string, perHostDelayMs: number): Promise<HostPacingAudit[]> {
  const { rows } = await sql<HostPacingAudit>`
    WITH gaps AS (
      SELECT host, submitted_at,
        extract(epoch FROM submitted_at - lag(finished_at) OVER w) * 1000 AS gap_ms
      FROM crawl_pages
      WHERE crawl_id = ${crawlId} AND submitted_at IS NOT NULL AND finished_at IS NOT NULL
      WINDOW w AS (PARTITION BY host ORDER BY submitted_at)
    )
    SELECT g.host,
      count(*)::int AS pages,
      floor(min(g.gap_ms))::int AS "minGapMs",
      greatest(${perHostDelayMs}::int, coalesce(h.effective_delay_ms, 0))::int AS "effectiveDelayMs",
      count(*) FILTER (WHERE g.gap_ms < greatest(${perHostDelayMs}::int, coalesce(h.effective_delay_ms, 0)))::int AS violations,
      count(*) FILTER (WHERE g.gap_ms < 0)::int AS overlaps,
      coalesce((array_agg(floor(g.gap_ms)::int ORDER BY g.submitted_at) FILTER (WHERE g.gap_ms IS NOT NULL))[1:${PACING_GAPS_PER_HOST}::int], '{}') AS "gapsMs"
    FROM gaps g
    LEFT JOIN crawl_hosts h ON h.crawl_id = ${crawlId} AND h.host = g.host
    GROUP BY g.host, h.effective_delay_ms
    ORDER BY g.host
  `.execute(db);
  return rows;
}
