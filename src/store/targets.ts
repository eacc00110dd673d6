// capture_targets: the list a crawl with fromTargets starts from. Written only by
// `npm run targets` (src/cli/targets.ts); read by POST /api/crawls.
import { sql } from 'kysely';
import type { Db } from '../db/connect.ts';

export interface Target {
  id: string;
  orgId: string;
  url: string;
  enabled: boolean;
  createdAt: Date;
}

const view = (r: { id: string; org_id: string; url: string; enabled: boolean; created_at: Date }): Target => ({
  id: r.id,
  orgId: r.org_id,
  url: r.url,
  enabled: r.enabled,
  createdAt: r.created_at,
});

/** The organization's enabled targets, oldest first; `limit` takes the first n. */
export async function enabledTargetUrls(db: Db, orgId: string, limit?: number): Promise<string[]> {
  let q = db.selectFrom('capture_targets').select('url').where('org_id', '=', orgId).where('enabled', '=', true).orderBy('created_at').orderBy('id');
  if (limit !== undefined) q = q.limit(limit);
  return (await q.execute()).map((r) => r.url);
}

/** Adds a target, or enables it again when it is already listed. */
export async function addTarget(db: Db, orgId: string, url: string): Promise<{ target: Target; created: boolean }> {
  const row = await db
    .insertInto('capture_targets')
    .values({ org_id: orgId, url })
    .onConflict((oc) => oc.columns(['org_id', 'url_hash']).doUpdateSet({ enabled: true }))
    .returning(['id', 'org_id', 'url', 'enabled', 'created_at', sql<boolean>`(xmax = 0)`.as('inserted')])
    .executeTakeFirstOrThrow();
  return { target: view(row), created: row.inserted };
}

export async function listTargets(db: Db, orgId: string): Promise<Target[]> {
  const rows = await db
    .selectFrom('capture_targets')
    .select(['id', 'org_id', 'url', 'enabled', 'created_at'])
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(view);
}

/** Disables a target (rows are kept: a crawl's history may name them). False when not listed. */
export async function disableTarget(db: Db, orgId: string, url: string): Promise<boolean> {
  const res = await db
    .updateTable('capture_targets')
    .set({ enabled: false })
    .where('org_id', '=', orgId)
    .where(sql<boolean>`url_hash = digest(${url}, 'sha256')`)
    .where('url', '=', url)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
