// crawl_level_dispatches: what each level was handed (capability digests, artifact prefix,
// deadline) and how many reports it has taken; crawl_hosts: the delay and last finish the flow
// reported per host, which the next dispatch's notBefore is computed from.
import { sql } from 'kysely';
import type { Queryable } from '../db/connect.ts';

/** Capability digests kept per level: a dispatch retried this often has a problem elsewhere. */
export const MAX_CAPABILITIES_PER_LEVEL = 8;

export interface LevelDispatch {
  crawlId: string;
  depth: number;
  capabilityHashes: Buffer[];
  artifactPrefix: string;
  deadline: Date;
  reports: number;
}

/**
 * Records one dispatch of a level: its capability digest joins those of earlier attempts (the
 * flow may be working on an earlier one, whose answer was lost), the newest few kept; the prefix
 * and deadline are the latest.
 */
export async function recordDispatch(
  db: Queryable,
  d: { crawlId: string; depth: number; capabilityHash: Buffer; artifactPrefix: string; deadline: Date },
): Promise<void> {
  await sql`
    INSERT INTO crawl_level_dispatches (crawl_id, depth, capability_hashes, artifact_prefix, deadline)
    VALUES (${d.crawlId}, ${d.depth}, ARRAY[${d.capabilityHash}::bytea], ${d.artifactPrefix}, ${d.deadline})
    ON CONFLICT (crawl_id, depth) DO UPDATE SET
      capability_hashes = (crawl_level_dispatches.capability_hashes || excluded.capability_hashes)[
        greatest(1, cardinality(crawl_level_dispatches.capability_hashes) + 2 - ${MAX_CAPABILITIES_PER_LEVEL}) :],
      artifact_prefix = excluded.artifact_prefix,
      deadline = excluded.deadline,
      dispatched_at = now(),
      heartbeat_signalled_at = NULL
  `.execute(db);
}

export async function getDispatch(db: Queryable, crawlId: string, depth: number): Promise<LevelDispatch | undefined> {
  const r = await db.selectFrom('crawl_level_dispatches').selectAll().where('crawl_id', '=', crawlId).where('depth', '=', depth).executeTakeFirst();
  if (r === undefined) return undefined;
  return {
    crawlId: r.crawl_id,
    depth: r.depth,
    capabilityHashes: r.capability_hashes,
    artifactPrefix: r.artifact_prefix,
    deadline: new Date(r.deadline),
    reports: r.reports,
  };
}

/** Counts one more report of the level, unless it already took `max`. Returns the new count, or null. */
export async function takeReportSlot(db: Queryable, crawlId: string, depth: number, max: number): Promise<number | null> {
  const r = await db
    .updateTable('crawl_level_dispatches')
    .set({ reports: sql<number>`reports + 1` })
    .where('crawl_id', '=', crawlId)
    .where('depth', '=', depth)
    .where('reports', '<', max)
    .returning('reports')
    .executeTakeFirst();
  return r?.reports ?? null;
}

/**
 * Takes the level's turn to signal the workflow a heartbeat: true when none was signalled since the
 * dispatch or the last one is at least `minGapMs` old. releaseHeartbeatTurn gives it back when the
 * signal could not be sent.
 */
export async function takeHeartbeatTurn(db: Queryable, crawlId: string, depth: number, minGapMs: number): Promise<boolean> {
  const r = await db
    .updateTable('crawl_level_dispatches')
    .set({ heartbeat_signalled_at: sql<Date>`now()` })
    .where('crawl_id', '=', crawlId)
    .where('depth', '=', depth)
    .where((eb) =>
      eb.or([eb('heartbeat_signalled_at', 'is', null), eb('heartbeat_signalled_at', '<=', sql<Date>`now() - make_interval(secs => ${minGapMs / 1000})`)]),
    )
    .returning('depth')
    .executeTakeFirst();
  return r !== undefined;
}

export async function releaseHeartbeatTurn(db: Queryable, crawlId: string, depth: number): Promise<void> {
  await db.updateTable('crawl_level_dispatches').set({ heartbeat_signalled_at: null }).where('crawl_id', '=', crawlId).where('depth', '=', depth).execute();
}

export interface HostPacing {
  host: string;
  delayMs: number;
  lastFinishedAt: Date | null;
}

/** Keeps the longer delay and the later finish of what was recorded and what is given. */
export async function recordHosts(db: Queryable, crawlId: string, hosts: HostPacing[]): Promise<void> {
  if (hosts.length === 0) return;
  const rows = hosts.map((h) => ({ host: h.host, delay: h.delayMs, last: h.lastFinishedAt?.toISOString() ?? null }));
  await sql`
    INSERT INTO crawl_hosts (crawl_id, host, effective_delay_ms, last_finished_at)
    SELECT ${crawlId}::uuid, x.host, x.delay, x.last
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(host text, delay int, last timestamptz)
    ON CONFLICT (crawl_id, host) DO UPDATE SET
      effective_delay_ms = greatest(crawl_hosts.effective_delay_ms, excluded.effective_delay_ms),
      last_finished_at = greatest(crawl_hosts.last_finished_at, excluded.last_finished_at)
  `.execute(db);
}

/** What crawl_hosts holds for `hosts` of the crawl. */
export async function hostPacing(db: Queryable, crawlId: string, hosts: string[]): Promise<Map<string, HostPacing>> {
  if (hosts.length === 0) return new Map();
  // one array parameter: a level may touch more hosts than a statement may have parameters
  const rows = await db
    .selectFrom('crawl_hosts')
    .selectAll()
    .where('crawl_id', '=', crawlId)
    .where(sql<boolean>`host = ANY(${hosts}::text[])`)
    .execute();
  return new Map(
    rows.map((r) => [
      r.host,
      { host: r.host, delayMs: r.effective_delay_ms, lastFinishedAt: r.last_finished_at === null ? null : new Date(r.last_finished_at) },
    ]),
  );
}
