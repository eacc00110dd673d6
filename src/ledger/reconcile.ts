// Reconciling (spec "Filling the ledger"): crawling is for latency, reconciling is for
// correctness. Registers the captures that were reported but did not make it into the ledger —
// reading the manifest failed, or writing the row did.
//
// It reads the capture_submissions rows that carry a manifest_key and have no archive yet, nor
// had one its owner deleted (with sinceDays, only those reported in the last n days) and fetches exactly those keys, at the
// version the report named when it named one (as admission reads: what another capture worker
// put over the key since is not read). It never lists the bucket and never rebuilds a key: the
// key is what the level report recorded.
// What it finds is registered exactly as level admission registers it — the same manifest
// checks (checkManifestTask, archiveFromManifest) and the same registerCaptures, so each archive
// lands with its `parent capture_job:<crawl>` tuple in one transaction — and the crawl's page row
// is corrected to what the manifest says (the manifest wins).
//
// What it cannot pick up, by construction: a capture with no capture_submissions row (its level
// report never arrived) and a capture reported with manifestError (no key to read).
import { sql } from 'kysely';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Db, Queryable } from '../db/connect.ts';
import { archiveFromManifest, checkManifestTask, checkPlacement, isCancelled, type ArchiveRecord, type ManifestRead } from '../domain/admission.ts';
import { crawlKeyProblem } from '../domain/level-dispatch.ts';
import { mapLimit } from '../domain/map-limit.ts';
import { readManifest } from './manifest-read.ts';
import { registerCaptures } from './register.ts';

export interface ReconcileDeps {
  db: Db;
  s3: S3Client;
  /** the bucket manifests are read from (the one level admission reads) */
  bucket: string;
  /** concurrent S3 reads (default 32) */
  readConcurrency?: number;
  log?: { info?(msg: string, meta?: Record<string, unknown>): void; warn(msg: string, meta?: Record<string, unknown>): void };
}

export interface ReconcileOptions {
  /** only captures reported in the last n days (capture_submissions.reported_at) */
  sinceDays?: number;
  /** rows read and registered per transaction (default 500) */
  batchSize?: number;
  /** the clock (tests) */
  now?: Date;
  /** called after each batch with the totals so far (a Temporal heartbeat, progress output) */
  onBatch?: (soFar: ReconcileResult) => void;
}

/** Why a pending capture was left out of the ledger although its manifest was read. */
export type SkipReason =
  /** the capture failed: it uploaded nothing */
  | 'failed'
  /** ERROR_TYPE_CANCELLED: the flow's deadline ran out mid-capture, no artifacts */
  | 'cancelled'
  /** succeeded, but without a WACZ */
  | 'no-wacz'
  /** something is at the key, but it is not a manifest of this task */
  | 'invalid'
  /** the crawl is gone (capture_submissions.crawl_id NULL): no capture_job to hang it on */
  | 'no-crawl'
  /** the WACZ (bucket, key) is already registered under another task */
  | 'duplicate-object'
  /** the manifest's key or artifacts lie outside its level's prefix or the bucket (checkPlacement) */
  | 'refused'
  /** the manifest key lies under another crawl's prefix than its row's (crawlKeyProblem): not read */
  | 'other-crawl';

export interface ReconcileResult {
  /** rows that carry a manifest_key and had no archive when the run started */
  pending: number;
  /** captures this run put into the ledger, each archive with its tuple queued in the same
   * transaction (a capture a concurrent admission or run registered first counts here too) */
  registered: number;
  /** a manifest the ledger does not admit (failed, cancelled, …) — see skippedBy */
  skipped: number;
  /** nothing at the reported key (NoSuchKey) */
  missing: number;
  /** the store could not be asked (down, timeout): left pending for the next run */
  unreadable: number;
  skippedBy: Partial<Record<SkipReason, number>>;
  /** crawl_pages rows this run corrected to the manifest's word */
  pagesCorrected: number;
}

export interface PendingRow {
  task_id: string;
  crawl_id: string | null;
  url: string;
  manifest_key: string;
  /** the manifest's version the report named; null: the key is read as it is */
  manifest_version: string | null;
  reported_at: Date;
}

export type Outcome =
  | { kind: 'register'; row: PendingRow; archive: ArchiveRecord; finalUrl: string | null; finishedAt: string | null }
  /** page: what the crawl_pages row becomes (null: left as it is) */
  | { kind: 'skip'; row: PendingRow; reason: SkipReason; page: 'captured' | 'failed' | null }
  | { kind: 'missing'; row: PendingRow }
  | { kind: 'unreadable'; row: PendingRow; error: string };

/** What admission would make of one pending capture's manifest. Pure. */
export function decideReconcile(row: PendingRow, read: ManifestRead, now: Date): Outcome {
  switch (read.kind) {
    case 'missing':
      return { kind: 'missing', row };
    case 'unreadable':
      return { kind: 'unreadable', row, error: read.error };
    case 'invalid':
    case 'absent':
      return { kind: 'skip', row, reason: 'invalid', page: null };
    case 'refused':
      return { kind: 'skip', row, reason: 'refused', page: 'failed' };
    case 'ok': {
      const m = read.manifest;
      const decision = archiveFromManifest(m, { manifestKey: row.manifest_key, fallbackUrl: row.url, now });
      if (!decision.admit) {
        // as admission: a failed or cancelled capture's page is failed whatever the report said;
        // one that succeeded without a WACZ is captured, with no archive
        const succeeded = m.status === 'succeeded' && !isCancelled(m);
        return { kind: 'skip', row, reason: decision.reason, page: succeeded ? 'captured' : 'failed' };
      }
      if (row.crawl_id === null) return { kind: 'skip', row, reason: 'no-crawl', page: null };
      return { kind: 'register', row, archive: decision.archive, finalUrl: m.finalUrl ?? null, finishedAt: m.finishedAt ?? null };
    }
  }
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * One pass over the pending captures. Safe to run concurrently with admission and with itself:
 * registration is ON CONFLICT DO NOTHING per task, so a capture is registered once.
 */
export async function reconcile(deps: ReconcileDeps, opts: ReconcileOptions = {}): Promise<ReconcileResult> {
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? 500));
  const now = opts.now ?? new Date();
  const since = sinceOf(opts.sinceDays, now);
  const result: ReconcileResult = { pending: 0, registered: 0, skipped: 0, missing: 0, unreadable: 0, skippedBy: {}, pagesCorrected: 0 };
  // Keyset over the task id (the primary key): rows that stay pending (skipped, missing) are
  // passed once, and rows registered meanwhile by someone else simply drop out.
  let cursor: string | undefined;
  for (;;) {
    const rows = await pendingRows(deps.db, { batchSize, since, cursor });
    if (rows.length === 0) break;
    cursor = rows[rows.length - 1]!.task_id;
    result.pending += rows.length;
    const outcomes = await readOutcomes(deps, rows, now);
    const batch = await registerBatch(deps.db, outcomes);
    addBatch(deps, result, outcomes, batch);
    opts.onBatch?.({ ...result, skippedBy: { ...result.skippedBy } });
    if (rows.length < batchSize) break;
  }
  deps.log?.info?.('reconciled', { ...result });
  return result;
}

function sinceOf(sinceDays: number | undefined, now: Date): Date | undefined {
  if (sinceDays === undefined) return undefined;
  if (!(Number.isFinite(sinceDays) && sinceDays >= 0)) throw new RangeError(`sinceDays must be a number ≥ 0, got ${String(sinceDays)}`);
  return new Date(now.getTime() - sinceDays * DAY_MS);
}

/** The next batch of capture_submissions rows that carry a manifest_key and have no archive. */
async function pendingRows(db: Db, at: { batchSize: number; since: Date | undefined; cursor: string | undefined }): Promise<PendingRow[]> {
  let q = db
    .selectFrom('capture_submissions as s')
    .select(['s.task_id', 's.crawl_id', 's.url', 's.manifest_key', 's.manifest_version', 's.reported_at'])
    .where('s.manifest_key', 'is not', null)
    .where((eb) =>
      eb.not(
        eb.or([
          eb.exists(
            eb
              .selectFrom('archives as a')
              .select(sql`1`.as('one'))
              .whereRef('a.task_id', '=', 's.task_id'),
          ),
          // its archive was deleted (delete-archive.ts): it stays deleted
          eb.exists(
            eb
              .selectFrom('archive_deletions as d')
              .select(sql`1`.as('one'))
              .whereRef('d.task_id', '=', 's.task_id'),
          ),
        ]),
      ),
    )
    .orderBy('s.task_id')
    .limit(at.batchSize);
  if (at.since !== undefined) q = q.where('s.reported_at', '>=', at.since);
  if (at.cursor !== undefined) q = q.where('s.task_id', '>', at.cursor);
  return (await q.execute()) as PendingRow[];
}

/** Each row's manifest, read unless its key lies under another crawl's prefix, and what admission would make of it. */
async function readOutcomes(deps: ReconcileDeps, rows: PendingRow[], now: Date): Promise<Outcome[]> {
  const { s3, bucket } = deps;
  const prefixes = await dispatchedPrefixes(
    deps.db,
    rows.flatMap((r) => (r.crawl_id !== null ? [r.crawl_id] : [])),
  );
  // a key under another crawl's prefix is never read: its row's crawl would take that capture in
  const foreign = rows.map((row) =>
    row.crawl_id === null
      ? null
      : crawlKeyProblem({ manifestKey: row.manifest_key, taskId: row.task_id, crawlId: row.crawl_id }, prefixes.get(row.crawl_id) ?? []),
  );
  const reads = await mapLimit(rows, deps.readConcurrency ?? 32, async (row, i): Promise<ManifestRead | null> =>
    foreign[i] !== null
      ? null
      : checkPlacement(checkManifestTask(await readManifest(s3, bucket, row.manifest_key, row.manifest_version ?? undefined), row.task_id), {
          taskId: row.task_id,
          manifestKey: row.manifest_key,
          bucket,
        }),
  );
  const otherCrawl = foreign.filter((f) => f !== null);
  if (otherCrawl.length > 0) deps.log?.warn('manifest keys outside their own crawl: nothing registered', { count: otherCrawl.length, first: otherCrawl[0] });
  return rows.map((row, i): Outcome => (reads[i] === null ? { kind: 'skip', row, reason: 'other-crawl', page: null } : decideReconcile(row, reads[i]!, now)));
}

type Registered = Extract<Outcome, { kind: 'register' }>;

interface BatchWritten {
  registered: number;
  duplicates: Registered[];
  corrected: number;
}

/** The batch's captures registered and its pages corrected, in one transaction. */
async function registerBatch(db: Db, outcomes: Outcome[]): Promise<BatchWritten> {
  return db.transaction().execute(async (trx) => {
    const toRegister = outcomes.filter((o): o is Registered => o.kind === 'register');
    const regs = await registerCaptures(
      trx,
      toRegister.map((o) => ({ archive: o.archive, crawlId: o.row.crawl_id! })),
    );
    const inLedger = new Set(regs.filter((r) => r.archiveId !== '').map((r) => r.taskId));
    const corrected = await correctPages(trx, pageCorrections(toRegister, outcomes));
    return { registered: inLedger.size, duplicates: toRegister.filter((o) => !inLedger.has(o.row.task_id)), corrected };
  });
}

/** The manifest wins: a registered capture's page is captured, a failed or cancelled one's failed. */
function pageCorrections(toRegister: Registered[], outcomes: Outcome[]): PageCorrection[] {
  return [
    ...toRegister.map((o) => ({
      task_id: o.row.task_id,
      crawl_id: o.row.crawl_id!,
      url: o.row.url,
      state: 'captured' as const,
      final_url: o.finalUrl,
      finished_at: o.finishedAt,
    })),
    ...outcomes
      .filter((o): o is Extract<Outcome, { kind: 'skip' }> => o.kind === 'skip' && o.page !== null && o.row.crawl_id !== null)
      .map((o) => ({ task_id: o.row.task_id, crawl_id: o.row.crawl_id!, url: o.row.url, state: o.page!, final_url: null, finished_at: null })),
  ];
}

/** Adds one batch's outcomes to the totals, and logs what was left out. */
function addBatch(deps: ReconcileDeps, result: ReconcileResult, outcomes: Outcome[], batch: BatchWritten): void {
  const skip = (reason: SkipReason): void => {
    result.skipped += 1;
    result.skippedBy[reason] = (result.skippedBy[reason] ?? 0) + 1;
  };
  result.registered += batch.registered;
  result.pagesCorrected += batch.corrected;
  for (const o of outcomes) {
    if (o.kind === 'missing') result.missing += 1;
    else if (o.kind === 'unreadable') result.unreadable += 1;
    else if (o.kind === 'skip') skip(o.reason);
  }
  for (const o of batch.duplicates) {
    skip('duplicate-object');
    deps.log?.warn('WACZ already registered under another task', { taskId: o.row.task_id, key: o.archive.objectKey });
  }
  const unreadable = outcomes.filter((o) => o.kind === 'unreadable');
  if (unreadable.length > 0) {
    deps.log?.warn('manifests unreadable, left for the next run', { count: unreadable.length, first: (unreadable[0] as { error: string }).error });
  }
}

/** Per crawl, the artifact prefixes its levels were dispatched with. */
async function dispatchedPrefixes(db: Db, crawlIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (crawlIds.length === 0) return out;
  const rows = await db
    .selectFrom('crawl_level_dispatches')
    .select(['crawl_id', 'artifact_prefix'])
    .where('crawl_id', 'in', [...new Set(crawlIds)])
    .execute();
  for (const r of rows) out.set(r.crawl_id, [...(out.get(r.crawl_id) ?? []), r.artifact_prefix]);
  return out;
}

interface PageCorrection {
  task_id: string;
  crawl_id: string;
  url: string;
  state: 'captured' | 'failed';
  final_url: string | null;
  finished_at: string | null;
}

/**
 * Sets each capture's crawl_pages row to the manifest's word. The row is found by its task id,
 * or — when admission never got to write the task id — by the submission's URL on that crawl.
 */
async function correctPages(db: Queryable, pages: PageCorrection[]): Promise<number> {
  if (pages.length === 0) return 0;
  const res = await sql`
    UPDATE crawl_pages p SET
      state = x.state,
      skip_reason = NULL,
      task_id = x.task_id,
      final_url = COALESCE(x.final_url, p.final_url),
      finished_at = COALESCE(p.finished_at, x.finished_at)
    FROM jsonb_to_recordset(${JSON.stringify(pages)}::jsonb)
      AS x(task_id text, crawl_id uuid, url text, state text, final_url text, finished_at timestamptz)
    WHERE p.crawl_id = x.crawl_id
      AND (p.task_id = x.task_id OR (p.task_id IS NULL AND p.url_hash = digest(x.url, 'sha256') AND p.url = x.url))
      AND p.state IS DISTINCT FROM x.state
  `.execute(db);
  return Number(res.numAffectedRows ?? 0);
}

/** `npm run fga:reconcile -- [--since-days <n>]`. Throws RangeError naming what is wrong. */
export function parseReconcileArgs(argv: readonly string[]): ReconcileOptions {
  const out: ReconcileOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    let value: string | undefined;
    if (a === '--since-days') {
      value = argv[++i];
      if (value === undefined) throw new RangeError('--since-days needs a number of days');
    } else if (a.startsWith('--since-days=')) {
      value = a.slice('--since-days='.length);
    } else {
      throw new RangeError(`unknown argument ${JSON.stringify(a)} (usage: npm run fga:reconcile -- [--since-days <n>])`);
    }
    if (out.sinceDays !== undefined) throw new RangeError('--since-days given twice');
    if (!/^\d+(\.\d+)?$/.test(value)) throw new RangeError(`--since-days must be a number of days ≥ 0, got ${JSON.stringify(value)}`);
    out.sinceDays = Number(value);
  }
  return out;
}

/** The run's four counts (and what was unreadable, when anything was). */
export function formatReconcileResult(r: ReconcileResult): string[] {
  const lines = [`pending ${r.pending}`, `registered ${r.registered}`, `skipped ${r.skipped}`, `missing ${r.missing}`];
  const reasons = Object.entries(r.skippedBy).filter(([, n]) => (n ?? 0) > 0);
  if (reasons.length > 0) lines[2] += ` (${reasons.map(([k, n]) => `${k} ${n}`).join(', ')})`;
  if (r.unreadable > 0) lines.push(`unreadable ${r.unreadable} (the store could not be asked; they stay pending for the next run)`);
  return lines;
}
