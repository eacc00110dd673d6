// Tuple writes are recorded as outbox rows in the same transaction as the rows they describe:
// either both land or neither does. Delivery to OpenFGA happens afterwards (drainOutbox), at
// least once, and nothing leaves the outbox before OpenFGA has accepted it.
//
// Sending a batch: src/fga/outbox-send.ts; which rows may go together: src/domain/outbox-plan.ts.
//
// Dead letter: a tuple OpenFGA refuses for its own sake counts a refusal (not OpenFGA unreachable,
// overloaded or failing: outbox-send.ts isUnavailable); at `deadAfter` refusals the row gets
// dead_at. A dead row is not sent again and no longer holds back later rows for the same tuple;
// it stays in the table, counted, until an operator puts it back (reviveDeadLetters,
// `npm run fga:drain -- --retry-dead`) or deletes it.
import type { OpenFgaClient } from '@openfga/sdk';
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Queryable } from '../db/connect.ts';
import { copyRows, type CopyTarget } from '../db/copy.ts';
import type { Database } from '../db/types.ts';
import { claimBatch, groupFailures, overtakingUnits, planBatch, type LanePlace, type Unit } from '../domain/outbox-plan.ts';
import { sendUnits, type QueuedRow, type SendOutcome } from './outbox-send.ts';
import type { Tuple } from './tuples.ts';

export async function enqueueTuples(trx: Queryable, tuples: Tuple[], operation: 'write' | 'delete' = 'write'): Promise<void> {
  // copied in (src/db/copy.ts): admission queues a tuple per archive, 1,000s a level, and the
  // outbox has no key a row could already hold
  await copyRows(
    trx,
    OUTBOX_COPY,
    tuples.map((t) => [operation, t.user, t.relation, t.object, t.condition === undefined ? null : JSON.stringify(t.condition)]),
  );
}

/** Where tuples are queued (the bench's write floor copies the same). */
export const OUTBOX_COPY: CopyTarget = { table: 'fga_outbox', columns: ['operation', 'tuple_user', 'relation', 'object', 'condition'] };

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

const describe = (r: QueuedRow): DeliveredTuple => ({ id: r.id, operation: r.operation, user: r.tuple_user, relation: r.relation, object: r.object });

/** A queued row, with how many live rows of its tuple were queued before it. */
export type CountedRow = QueuedRow & { earlier: number };

interface DrainSettings {
  batchSize: number;
  concurrency: number;
  deadAfter: number;
  onBatch: DrainOptions['onBatch'];
}

/** What the lanes of one drain share. */
interface DrainState {
  result: DrainResult;
  /** rows this drain may still take (maxRows) */
  budget: number;
  /** rows that waited this pass for an earlier row of their tuple */
  heldBack: number;
  /** failed once in this drain: not tried again until the next one */
  failedIds: Set<number>;
}

/** The lanes started together (a drain's, or one pass over rows held back): how far their batches reached. */
interface Pass {
  /** the highest id any lane of the pass has claimed or locked (claimBatch) */
  frontier: number;
}

interface Lane extends LanePlace {
  pass: Pass;
}

function settingsOf(opts: DrainOptions): DrainSettings {
  return {
    batchSize: Math.max(1, Math.min(MAX_TUPLES_PER_WRITE, Math.floor(opts.batchSize ?? MAX_TUPLES_PER_WRITE))),
    concurrency: Math.max(1, Math.floor(opts.concurrency ?? 4)),
    deadAfter: Math.max(1, Math.floor(opts.deadAfter ?? OUTBOX_DEAD_AFTER)),
    onBatch: opts.onBatch,
  };
}

/**
 * Has the rest of the transaction walk indexes, never read the whole queue. The planner sizes the
 * outbox from its last ANALYZE, and a queue analyzed while nearly empty (as it is between bursts,
 * or never, as in a new database) looked a few dozen rows long when thousands had just been
 * queued: every batch's lock then read and sorted the whole queue (EXPLAIN ANALYZE at 10,000
 * queued rows: 5 ms a batch, against 0.5 walking the primary key).
 */
export async function walkIndexes(trx: Transaction<Database>): Promise<void> {
  await sql`SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)`.execute(trx);
}

/**
 * The next rows after `from` (where the lane's batch starts: claimBatch), locked (FOR UPDATE SKIP
 * LOCKED: no other lane or drainer takes them), each with its count of earlier live rows of the
 * same tuple: one round trip where the lock and the overtaking check used to take two. The count
 * runs on the locked rows only, and only by the tuple's index: `e.id + 0` keeps the primary key
 * from serving `e.id < b.id`, which a planner misled by stale statistics chose in a bench drain of
 * 100,000 rows (auto_explain: every earlier id walked, 0.58 ms a row, 58 ms a batch). The batch's
 * range and order come from the primary key alone: the tuple index has no id among its keys
 * (migrations/0016).
 */
async function lockNext(trx: Transaction<Database>, from: number, limit: number, failedIds: Set<number>): Promise<CountedRow[]> {
  return (await lockNextQuery(from, limit, failedIds).execute(trx)).rows;
}

/** lockNext's statement: run it after walkIndexes (its plan is tested). */
export function lockNextQuery(cursor: number, limit: number, failedIds: ReadonlySet<number>): RawBuilder<CountedRow> {
  return sql<CountedRow>`
    WITH batch AS (
      SELECT ctid, id, operation, tuple_user, relation, object, condition FROM fga_outbox
      WHERE id > ${cursor} AND dead_at IS NULL AND NOT (id = ANY(${[...failedIds]}::bigint[]))
      ORDER BY id LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    SELECT b.*, (
      SELECT count(*)::int FROM fga_outbox e
      WHERE e.object = b.object AND e.relation = b.relation AND e.tuple_user = b.tuple_user AND e.id + 0 < b.id AND e.dead_at IS NULL
    ) AS earlier
    FROM batch b ORDER BY b.id`;
}

/**
 * Deletes rows this transaction locked, where they lie: their ctid, which cannot change while the
 * lock is held (the ids deleted are checked by deleteAccepted). By id the planner chose among the
 * queue's indexes from its last statistics, and in a bench drain of 100,000 rows it walked the
 * whole tuple index for every batch (auto_explain: 44,803 buffers and 200 ms a DELETE; the drain
 * at 2,500 tuples/s against 9,500). A TID scan reads the rows and nothing else (its plan is tested).
 */
export function deleteAcceptedQuery(rows: readonly Pick<QueuedRow, 'ctid'>[]): RawBuilder<{ id: number }> {
  return sql<{ id: number }>`DELETE FROM fga_outbox WHERE ctid = ANY(${rows.map((r) => r.ctid)}::tid[]) RETURNING id`;
}

/** deleteAcceptedQuery, failing the batch's transaction unless exactly these rows went. */
async function deleteAccepted(trx: Transaction<Database>, rows: readonly Pick<QueuedRow, 'id' | 'ctid'>[]): Promise<void> {
  const gone = new Set((await deleteAcceptedQuery(rows).execute(trx)).rows.map((r) => Number(r.id)));
  if (gone.size !== rows.length || rows.some((r) => !gone.has(Number(r.id)))) {
    throw new Error(`outbox: deleting ${rows.length} accepted rows where they lie removed ${gone.size} rows, not exactly those`);
  }
}

/**
 * The rows of one batch to send: planned (cut before a second variant of a tuple), minus the units
 * that would overtake an earlier queued row of their tuple; undefined when there is nothing to send
 * (every row had failed in this drain already). Moves the lane's cursor past what it looked at,
 * notes whether the plan cut the batch (lane.cut), and gives back to the budget what it did not take.
 */
function selectUnits(rows: CountedRow[], want: number, lane: Lane, state: DrainState): Unit<CountedRow>[] | undefined {
  // The failed ids the query filtered on were read before it went out; a row another lane failed
  // in the meantime can still come back. The set is current by now: a lane notes its failures
  // before its commit releases the rows, and this batch holds every row it will send.
  const fresh = rows.filter((r) => !state.failedIds.has(r.id));
  if (fresh.length === 0) {
    state.budget += want;
    lane.cursor = rows[rows.length - 1]!.id;
    lane.cut = false;
    return undefined;
  }
  const { units, taken } = planBatch(fresh);
  state.budget += want - taken.length;
  // Rows that fail or wait stay queued; the cursor keeps this pass from looping over them.
  lane.cursor = taken[taken.length - 1]!.id;
  lane.cut = taken.length < fresh.length;
  const held = overtakingUnits(units);
  for (const u of held) state.heldBack += u.rows.length;
  return units.filter((u) => !held.has(u));
}

/** Removes the accepted rows; counts a failure (and a refusal) on the others. Returns the ids dead-lettered now. */
async function settle(trx: Transaction<Database>, sent: SendOutcome, deadAfter: number): Promise<Set<number>> {
  if (sent.accepted.length > 0) await deleteAccepted(trx, sent.accepted);
  const dead = new Set<number>();
  for (const group of groupFailures(sent.failed)) {
    const { error, refused } = group[0]!;
    const rows = await trx
      .updateTable('fga_outbox')
      .set({
        attempts: sql`attempts + 1`,
        last_error: error,
        ...(refused ? { refusals: sql`refusals + 1`, dead_at: sql`CASE WHEN refusals + 1 >= ${deadAfter} THEN now() END` } : {}),
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
  return dead;
}

/** What later batches must know as soon as a Write has answered: OpenFGA down, rows that failed. */
function noteSent(state: DrainState, sent: SendOutcome): void {
  if (sent.unavailable !== undefined) state.result.unavailable ??= sent.unavailable;
  for (const f of sent.failed) state.failedIds.add(f.row.id);
}

function account(state: DrainState, settings: DrainSettings, sent: SendOutcome, dead: Set<number>): void {
  const { result } = state;
  result.delivered += sent.accepted.length;
  result.failed += sent.failed.length;
  result.deadLettered += dead.size;
  settings.onBatch?.({
    delivered: sent.accepted.map(describe),
    failed: sent.failed.map((f) => ({ row: describe(f.row), error: f.error, dead: dead.has(f.row.id) })),
  });
}

/** A batch's place in its lane. */
interface Turn {
  /** settles once the lane's previous batch has had OpenFGA's answer (or ended without a Write) */
  previousSent: Promise<unknown>;
  /** called once this batch's rows are locked and the lane's cursor is past them */
  locked: () => void;
  /** called once this batch has had OpenFGA's answer and noted it */
  sent: () => void;
}

/**
 * One batch of a lane, in its own transaction held until its rows are settled; false when the lane
 * found nothing more. It locks its rows while the lane's previous batch is still at OpenFGA, and
 * sends as soon as that one has its answer: a lane's Writes follow each other without the lock's
 * and the settling's round trips between them.
 */
function drainBatch(db: Kysely<Database>, fga: OpenFgaClient, lane: Lane, state: DrainState, settings: DrainSettings, turn: Turn): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const want = Math.min(settings.batchSize, state.budget);
    if (want <= 0) return false;
    state.budget -= want;
    await walkIndexes(trx);
    const claim = claimBatch(lane, lane.pass.frontier, want);
    lane.pass.frontier = claim.frontier;
    const rows = await lockNext(trx, claim.from, want, state.failedIds);
    if (rows.length === 0) {
      state.budget += want;
      return false;
    }
    lane.pass.frontier = Math.max(lane.pass.frontier, rows[rows.length - 1]!.id);
    const units = selectUnits(rows, want, lane, state);
    // after a cut the lane's next batch must see the rows past it, which this one holds till it commits
    if (!lane.cut) turn.locked();
    await turn.previousSent;
    if (units === undefined || state.result.unavailable !== undefined) return true;
    const sent = await sendUnits(fga, units);
    noteSent(state, sent);
    turn.sent();
    const dead = await settle(trx, sent, settings.deadAfter);
    account(state, settings, sent, dead);
    return true;
  });
}

/**
 * A lane's batches, in id order: the next one locks its rows while this one's Write is in flight,
 * and sends once this one has its answer. One Write a lane at a time, at most two transactions a
 * lane (the next starts when the one before this has committed); a failed batch ends the lane and
 * the drain fails with its error.
 */
async function runLane(db: Kysely<Database>, fga: OpenFgaClient, state: DrainState, settings: DrainSettings, pass: Pass): Promise<void> {
  const lane: Lane = { cursor: 0, cut: false, pass };
  const batches: Promise<boolean>[] = [];
  let previous: Promise<unknown> = Promise.resolve();
  let previousSent: Promise<unknown> = Promise.resolve();
  let failed = false;
  while (!failed && state.result.unavailable === undefined) {
    const locked = Promise.withResolvers<boolean>();
    const sent = Promise.withResolvers<void>();
    const batch = drainBatch(db, fga, lane, state, settings, { previousSent, locked: () => locked.resolve(true), sent: () => sent.resolve() });
    batches.push(batch);
    const ended = batch.then(
      (found) => found,
      () => {
        failed = true;
        return false;
      },
    );
    // a batch that ends without a Write (or fails) lets the next one send all the same
    void ended.then(() => sent.resolve());
    if (!(await Promise.race([locked.promise, ended]))) break;
    await previous.catch(() => undefined);
    previous = batch;
    previousSent = sent.promise;
  }
  const outcomes = await Promise.allSettled(batches);
  const rejected = outcomes.find((o) => o.status === 'rejected');
  if (rejected !== undefined) throw rejected.reason;
}

/**
 * Delivers queued tuples to OpenFGA in id order, in batches of at most 100, and removes from the
 * outbox exactly the rows OpenFGA accepted. Each batch is read with FOR UPDATE SKIP LOCKED inside a
 * transaction held until its rows are removed, so concurrent drainers (and the `concurrency` lanes
 * of one drain) never take the same rows, and a tuple is never sent ahead of an earlier queued row
 * for the same tuple.
 */
export async function drainOutbox(db: Kysely<Database>, fga: OpenFgaClient, opts: DrainOptions = {}): Promise<DrainResult> {
  const settings = settingsOf(opts);
  const state: DrainState = {
    result: { delivered: 0, failed: 0, remaining: 0, deadLettered: 0, dead: 0 },
    budget: opts.maxRows ?? Number.POSITIVE_INFINITY,
    heldBack: 0,
    failedIds: new Set(),
  };
  const pass: Pass = { frontier: 0 };
  const lanes = Array.from({ length: settings.concurrency }, () => runLane(db, fga, state, settings, pass));
  await Promise.all(lanes);
  // Rows that waited for an earlier row of the same tuple: that row has had its turn now.
  for (let round = 0; round < 3 && state.heldBack > 0 && state.result.unavailable === undefined; round++) {
    state.heldBack = 0;
    await runLane(db, fga, state, settings, { frontier: 0 });
  }

  Object.assign(state.result, await outboxCounts(db));
  return state.result;
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
