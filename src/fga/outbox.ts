// Tuple writes are recorded as outbox rows in the same transaction as the rows they describe:
// either both land or neither does. Delivery to OpenFGA happens afterwards (drainOutbox), at
// least once, and nothing leaves the outbox before OpenFGA has accepted it.
//
// OpenFGA writes are transactional across the request: when any tuple in a batch is refused, none
// of the batch is written, including the tuples that were new. So a batch failure is never read as
// "already delivered": the batch is retried tuple by tuple, and only the tuples that still fail
// stay queued (attempts + 1, last_error). A tuple that already exists counts as delivered
// (on_duplicate: ignore; deletes use on_missing: ignore).
//
// Dead letter: a tuple OpenFGA refuses for its own sake (not because it is unreachable) counts a
// refusal; at `deadAfter` refusals the row gets dead_at. A dead row is not sent again and no
// longer holds back later rows for the same tuple; it stays in the table, counted, until an
// operator puts it back (reviveDeadLetters, `npm run fga:drain -- --retry-dead`) or deletes it.
import {
  ClientWriteRequestOnDuplicateWrites,
  ClientWriteRequestOnMissingDeletes,
  FgaApiAuthenticationError,
  FgaApiError,
  FgaApiNotFoundError,
  type OpenFgaClient,
  type TupleKey,
  type TupleKeyWithoutCondition,
} from '@openfga/sdk';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, OutboxRow } from '../db/types.ts';
import type { Tuple } from './tuples.ts';

export async function enqueueTuples(trx: Kysely<Database> | Transaction<Database>, tuples: Tuple[], operation: 'write' | 'delete' = 'write'): Promise<void> {
  if (tuples.length === 0) return;
  // one jsonb parameter rather than five per row: admission queues a tuple per archive, 1,000s a level
  const rows = tuples.map((t, ord) => ({ ord, tuple_user: t.user, relation: t.relation, object: t.object, condition: t.condition ?? null }));
  await sql`
    INSERT INTO fga_outbox (operation, tuple_user, relation, object, condition)
    SELECT ${operation}, x.tuple_user, x.relation, x.object, x.condition
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(ord int, tuple_user text, relation text, object text, condition jsonb)
    ORDER BY x.ord
  `.execute(trx);
}

/** OpenFGA refuses more than 100 tuples (writes and deletes together) in one write. */
export const MAX_TUPLES_PER_WRITE = 100;

/** Refusals after which a row moves to the dead letter. */
export const OUTBOX_DEAD_AFTER = 5;

export interface DeliveredTuple {
  id: number;
  operation: 'write' | 'delete';
  user: string;
  relation: string;
  object: string;
}

export interface DrainOptions {
  /** Rows per OpenFGA write, at most 100 (the default). */
  batchSize?: number;
  /** Stop after this many rows have been looked at (default: until the queue is empty). */
  maxRows?: number;
  /** Batches in flight at once, each in its own transaction (default 4). */
  concurrency?: number;
  /** Refusals (OpenFGA refusing the tuple itself) after which a row is dead-lettered (default OUTBOX_DEAD_AFTER). */
  deadAfter?: number;
  /** Called after each batch, e.g. to heartbeat a Temporal activity or print progress. */
  onBatch?: (batch: { delivered: DeliveredTuple[]; failed: { row: DeliveredTuple; error: string; dead: boolean }[] }) => void;
}

export interface DrainResult {
  /** Rows OpenFGA accepted (including tuples that were already there) and that left the outbox. */
  delivered: number;
  /** Rows that failed this time and stay queued with attempts + 1 and last_error. */
  failed: number;
  /** Rows still queued when the drain finished (failed ones and any enqueued meanwhile), dead letter not included. */
  remaining: number;
  /** Rows this drain moved to the dead letter (they are among `failed`). */
  deadLettered: number;
  /** Rows in the dead letter when the drain finished. */
  dead: number;
  /** Set when OpenFGA could not be reached (or refused the store): the drain stopped early. */
  unavailable?: string;
}

const describe = (r: OutboxRow): DeliveredTuple => ({ id: r.id, operation: r.operation, user: r.tuple_user, relation: r.relation, object: r.object });
const keyOf = (r: OutboxRow): string => `${r.tuple_user}\u0000${r.relation}\u0000${r.object}`;
const variantOf = (r: OutboxRow): string => `${r.operation}\u0000${JSON.stringify(r.condition ?? null)}`;

function errorText(err: unknown): string {
  if (err instanceof FgaApiError) {
    const status = err.statusCode ? `${err.statusCode} ` : '';
    return `${status}${err.apiErrorMessage ?? err.message}`.slice(0, 2000);
  }
  return (err instanceof Error ? err.message : String(err)).slice(0, 2000);
}

/**
 * An error that says nothing about the tuples themselves: OpenFGA unreachable, the store or model
 * missing, credentials refused. Retrying tuple by tuple would only repeat it.
 */
function isUnavailable(err: unknown): boolean {
  return !(err instanceof FgaApiError) || err instanceof FgaApiAuthenticationError || err instanceof FgaApiNotFoundError;
}

/**
 * One unit sent to OpenFGA: identical queued rows (the same tuple enqueued twice, e.g. by a
 * retried activity) travel as one tuple, since OpenFGA refuses duplicates within one request.
 */
interface Unit {
  rows: OutboxRow[];
}

function toRequest(units: Unit[]): { writes: TupleKey[]; deletes: TupleKeyWithoutCondition[] } {
  const writes: TupleKey[] = [];
  const deletes: TupleKeyWithoutCondition[] = [];
  for (const { rows } of units) {
    const r = rows[0]!;
    if (r.operation === 'delete') {
      deletes.push({ user: r.tuple_user, relation: r.relation, object: r.object });
    } else {
      const condition = r.condition ?? undefined;
      writes.push({
        user: r.tuple_user,
        relation: r.relation,
        object: r.object,
        ...(condition ? { condition: { name: condition.name, context: condition.context ?? {} } } : {}),
      });
    }
  }
  return { writes, deletes };
}

async function send(fga: OpenFgaClient, units: Unit[]): Promise<void> {
  const { writes, deletes } = toRequest(units);
  await fga.write(
    { writes, deletes },
    { conflict: { onDuplicateWrites: ClientWriteRequestOnDuplicateWrites.Ignore, onMissingDeletes: ClientWriteRequestOnMissingDeletes.Ignore } },
  );
}

/**
 * Groups rows, in id order, into units. The batch is cut before a row whose tuple is already in
 * it with a different operation or condition: a write and a later delete of one tuple must reach
 * OpenFGA in that order, so they cannot share a request.
 */
function plan(rows: OutboxRow[]): { units: Unit[]; taken: OutboxRow[] } {
  const byKey = new Map<string, { variant: string; unit: Unit }>();
  const units: Unit[] = [];
  const taken: OutboxRow[] = [];
  for (const row of rows) {
    const seen = byKey.get(keyOf(row));
    if (seen) {
      if (seen.variant !== variantOf(row)) break;
      seen.unit.rows.push(row);
    } else {
      const unit = { rows: [row] };
      byKey.set(keyOf(row), { variant: variantOf(row), unit });
      units.push(unit);
    }
    taken.push(row);
  }
  return { units, taken };
}

/**
 * Units whose tuple has a queued row outside this batch that comes before any of the unit's rows
 * (held by another drainer, or left behind after failing): delivering them now could overtake it,
 * e.g. a delete landing before the write it undoes. They wait for a later pass. A dead-lettered
 * row holds nothing back.
 */
async function overtaking(trx: Transaction<Database>, units: Unit[], taken: OutboxRow[]): Promise<Set<Unit>> {
  const firstId = new Map(units.map((u) => [keyOf(u.rows[0]!), u] as const));
  const rows = units.map((u) => u.rows[0]!);
  const earlier = await sql<{ tuple_user: string; relation: string; object: string; first: number }>`
    SELECT o.tuple_user, o.relation, o.object, min(o.id) AS first
    FROM fga_outbox o
    JOIN unnest(${rows.map((r) => r.tuple_user)}::text[], ${rows.map((r) => r.relation)}::text[], ${rows.map((r) => r.object)}::text[]) AS k (u, r, ob)
      ON o.tuple_user = k.u AND o.relation = k.r AND o.object = k.ob
    WHERE NOT (o.id = ANY(${taken.map((r) => r.id)}::bigint[])) AND o.dead_at IS NULL
    GROUP BY o.tuple_user, o.relation, o.object`.execute(trx);
  const held = new Set<Unit>();
  for (const e of earlier.rows) {
    const unit = firstId.get(`${e.tuple_user}\u0000${e.relation}\u0000${e.object}`);
    // against the unit's last row: identical rows may have come together across rows other lanes
    // held (SKIP LOCKED), and a delete joined to an earlier one must not pass a write between them
    if (unit && Number(e.first) < unit.rows[unit.rows.length - 1]!.id) held.add(unit);
  }
  return held;
}

interface Lane {
  cursor: number;
}

/**
 * Delivers queued tuples to OpenFGA in id order, in batches of at most 100, and removes from the
 * outbox exactly the rows OpenFGA accepted. Each batch is read with FOR UPDATE SKIP LOCKED inside a
 * transaction held until its rows are removed, so concurrent drainers (and the `concurrency` lanes
 * of one drain) never take the same rows, and a tuple is never sent ahead of an earlier queued row
 * for the same tuple.
 */
export async function drainOutbox(db: Kysely<Database>, fga: OpenFgaClient, opts: DrainOptions = {}): Promise<DrainResult> {
  const batchSize = Math.max(1, Math.min(MAX_TUPLES_PER_WRITE, Math.floor(opts.batchSize ?? MAX_TUPLES_PER_WRITE)));
  const maxRows = opts.maxRows ?? Number.POSITIVE_INFINITY;
  const concurrency = Math.max(1, Math.floor(opts.concurrency ?? 4));
  const deadAfter = Math.max(1, Math.floor(opts.deadAfter ?? OUTBOX_DEAD_AFTER));
  const result: DrainResult = { delivered: 0, failed: 0, remaining: 0, deadLettered: 0, dead: 0 };
  let budget = maxRows;
  let heldBack = 0;
  // Failed once in this drain: not tried again until the next one.
  const failedIds = new Set<number>();

  /** One batch; false when this lane found nothing more to take. */
  const batch = (lane: Lane): Promise<boolean> =>
    db.transaction().execute(async (trx) => {
      const want = Math.min(batchSize, budget);
      if (want <= 0) return false;
      budget -= want;
      const rows = await trx
        .selectFrom('fga_outbox')
        .selectAll()
        .where('id', '>', lane.cursor)
        .where('dead_at', 'is', null)
        .$if(failedIds.size > 0, (q) => q.where('id', 'not in', [...failedIds]))
        .orderBy('id')
        .limit(want)
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length === 0) {
        budget += want;
        return false;
      }
      // The `not in` above was built before the query went out; a row another lane failed in the
      // meantime can still come back (that lane committed, releasing the lock, after adding the
      // id). The set is current by now, so filter again: a failed row is tried once per drain.
      const fresh = rows.filter((r) => !failedIds.has(r.id));
      if (fresh.length === 0) {
        budget += want;
        lane.cursor = rows[rows.length - 1]!.id;
        return true;
      }
      const { units: planned, taken } = plan(fresh);
      budget += want - taken.length;
      // Rows that fail or wait stay queued; the cursor keeps this pass from looping over them.
      lane.cursor = taken[taken.length - 1]!.id;

      const held = await overtaking(trx, planned, taken);
      heldBack += [...held].reduce((n, u) => n + u.rows.length, 0);
      const units = planned.filter((u) => !held.has(u));

      const accepted: OutboxRow[] = [];
      // refused: OpenFGA refused the tuple itself (counts towards the dead letter)
      const failed: { row: OutboxRow; error: string; refused: boolean }[] = [];
      const sent = units.flatMap((u) => u.rows);
      try {
        if (units.length > 0) await send(fga, units);
        accepted.push(...sent);
      } catch (err) {
        if (isUnavailable(err)) {
          result.unavailable ??= errorText(err);
          for (const row of sent) failed.push({ row, error: errorText(err), refused: false });
        } else {
          // One refused tuple sinks the whole request: find out which, one tuple at a time.
          for (const unit of units) {
            if (result.unavailable !== undefined) {
              for (const row of unit.rows) failed.push({ row, error: result.unavailable, refused: false });
              continue;
            }
            try {
              await send(fga, [unit]);
              accepted.push(...unit.rows);
            } catch (single) {
              const error = errorText(single);
              const refused = !isUnavailable(single);
              if (!refused) result.unavailable ??= error;
              for (const row of unit.rows) failed.push({ row, error, refused });
            }
          }
        }
      }

      if (accepted.length > 0) {
        await trx
          .deleteFrom('fga_outbox')
          .where(
            'id',
            'in',
            accepted.map((r) => r.id),
          )
          .execute();
      }
      const dead = new Set<number>();
      for (const group of groupFailures(failed)) {
        const { error, refused: refusal } = group[0]!;
        const rows = await trx
          .updateTable('fga_outbox')
          .set({
            attempts: sql`attempts + 1`,
            last_error: error,
            ...(refusal ? { refusals: sql`refusals + 1`, dead_at: sql`CASE WHEN refusals + 1 >= ${deadAfter} THEN now() END` } : {}),
          })
          .where(
            'id',
            'in',
            group.map((f) => f.row.id),
          )
          .returning(['id', 'dead_at'])
          .execute();
        for (const r of rows) if (r.dead_at !== null) dead.add(r.id);
      }
      for (const f of failed) failedIds.add(f.row.id);
      result.delivered += accepted.length;
      result.failed += failed.length;
      result.deadLettered += dead.size;
      opts.onBatch?.({ delivered: accepted.map(describe), failed: failed.map((f) => ({ row: describe(f.row), error: f.error, dead: dead.has(f.row.id) })) });
      return true;
    });

  const runLane = async (): Promise<void> => {
    const lane: Lane = { cursor: 0 };
    while (result.unavailable === undefined && (await batch(lane)));
  };

  await Promise.all(Array.from({ length: concurrency }, runLane));
  // Rows that waited for an earlier row of the same tuple: that row has had its turn now.
  for (let pass = 0; pass < 3 && heldBack > 0 && result.unavailable === undefined; pass++) {
    heldBack = 0;
    await runLane();
  }

  Object.assign(result, await outboxCounts(db));
  return result;
}

/** Rows queued for delivery, and rows in the dead letter. */
export async function outboxCounts(db: Kysely<Database>): Promise<{ remaining: number; dead: number }> {
  const r = await db
    .selectFrom('fga_outbox')
    .select([
      sql<number>`count(*) FILTER (WHERE dead_at IS NULL)::int`.as('remaining'),
      sql<number>`count(*) FILTER (WHERE dead_at IS NOT NULL)::int`.as('dead'),
    ])
    .executeTakeFirstOrThrow();
  return { remaining: r.remaining, dead: r.dead };
}

/** Puts every dead-lettered row back in the queue with its refusals reset. Returns how many. */
export async function reviveDeadLetters(db: Kysely<Database>): Promise<number> {
  const res = await db.updateTable('fga_outbox').set({ dead_at: null, refusals: 0 }).where('dead_at', 'is not', null).executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Failures grouped by error text and by whether they were refusals: one UPDATE per group. */
function groupFailures<F extends { error: string; refused: boolean }>(failed: F[]): F[][] {
  const m = new Map<string, F[]>();
  for (const f of failed) {
    const k = `${f.refused ? 'r' : 'u'}${f.error}`;
    m.set(k, [...(m.get(k) ?? []), f]);
  }
  return [...m.values()];
}

export class OutboxUnavailableError extends Error {
  readonly result: DrainResult;
  constructor(message: string, result: DrainResult) {
    super(message);
    this.name = 'OutboxUnavailableError';
    this.result = result;
  }
}

/**
 * drainOutbox for callers that retry on failure (the Temporal activity): throws
 * OutboxUnavailableError when OpenFGA could not be reached, so the caller's retry policy runs,
 * and otherwise returns what was delivered. Rows refused for their own sake stay queued with
 * last_error and do not make it throw.
 */
export async function deliverTuples(db: Kysely<Database>, fga: OpenFgaClient, opts: DrainOptions = {}): Promise<DrainResult> {
  const result = await drainOutbox(db, fga, opts);
  if (result.unavailable !== undefined) {
    throw new OutboxUnavailableError(`OpenFGA is unavailable, ${result.remaining} tuples stay queued: ${result.unavailable}`, result);
  }
  return result;
}
