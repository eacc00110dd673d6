// The outbox against the real Postgres and the real OpenFGA: a row and its tuples land together or
// not at all, delivery is at least once, a tuple already in OpenFGA counts as delivered, one bad
// tuple never sinks the new ones beside it, and nothing leaves the outbox before OpenFGA took it.
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { ClientWriteRequestOnDuplicateWrites, OpenFgaClient } from '@openfga/sdk';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/types.ts';
import { canView } from '../../src/fga/authorize.ts';
import {
  deliverTuples,
  drainOutbox,
  enqueueTuples,
  deleteAcceptedQuery,
  lockNextQuery,
  MAX_TUPLES_PER_WRITE,
  OUTBOX_DEAD_AFTER,
  OutboxUnavailableError,
  reviveDeadLetters,
  walkIndexes,
  type DeliveredTuple,
} from '../../src/fga/outbox.ts';
import { archiveTuples, jobTuples, type Tuple } from '../../src/fga/tuples.ts';
import type { TestDatabase } from '../support/db.ts';
import type { TestStore } from '../support/fga.ts';
import { useHarness } from '../support/harness.ts';

const h = useHarness({ api: false });
let t: TestDatabase;
let store: TestStore;
beforeAll(() => {
  ({ tdb: t, store } = h);
});
beforeEach(async () => {
  await t.db.deleteFrom('fga_outbox').execute();
  await t.db.deleteFrom('archives').execute();
});

const outbox = () => t.db.selectFrom('fga_outbox').selectAll().orderBy('id').execute();

/** The scans of fga_outbox in an EXPLAIN (FORMAT JSON) plan, outermost first: node type and index. */
function outboxScans(rows: { 'QUERY PLAN': unknown }[]): { type: string; index?: string }[] {
  const scans: { type: string; index?: string }[] = [];
  const walk = (node: Record<string, unknown>): void => {
    if (node['Relation Name'] === 'fga_outbox')
      scans.push({ type: String(node['Node Type']), ...(node['Index Name'] ? { index: String(node['Index Name']) } : {}) });
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk((rows[0]!['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0]!.Plan);
  return scans;
}

async function stored(tuple: Tuple): Promise<boolean> {
  const r = await store.client.read({ user: tuple.user, relation: tuple.relation, object: tuple.object });
  return r.tuples.length === 1;
}

function newArchive(taskId = `task-${randomUUID()}`) {
  return { task_id: taskId, bucket: 'captures', object_key: `${taskId}.wacz`, url: 'https://example.com/', captured_at: new Date() };
}

function rejectAfter(ms: number, why: string): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(why)), ms).unref());
}

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('enqueueing with the row', () => {
  it('an archive row and its tuples commit together', async () => {
    const crawlId = randomUUID();
    const archive = await t.db.transaction().execute(async (trx) => {
      const a = await trx.insertInto('archives').values(newArchive()).returning('id').executeTakeFirstOrThrow();
      await enqueueTuples(trx, archiveTuples(a.id, crawlId));
      return a;
    });
    expect(await t.db.selectFrom('archives').select('id').execute()).toEqual([{ id: archive.id }]);
    expect((await outbox()).map((r) => [r.operation, r.tuple_user, r.relation, r.object])).toEqual([
      ['write', `capture_job:${crawlId}`, 'parent', `archive:${archive.id}`],
    ]);
  });

  it('a rollback finds neither the archive nor its tuples', async () => {
    const taskId = `task-${randomUUID()}`;
    await expect(
      t.db.transaction().execute(async (trx) => {
        const a = await trx.insertInto('archives').values(newArchive(taskId)).returning('id').executeTakeFirstOrThrow();
        await enqueueTuples(trx, archiveTuples(a.id, randomUUID()));
        expect(await trx.selectFrom('fga_outbox').select('id').execute()).toHaveLength(1);
        throw new Error('fails after both were written');
      }),
    ).rejects.toThrow('fails after both were written');
    expect(await t.db.selectFrom('archives').select('id').where('task_id', '=', taskId).execute()).toEqual([]);
    expect(await outbox()).toEqual([]);
  });

  it('a failing row insert takes the tuples with it (unique task_id)', async () => {
    const taskId = `task-${randomUUID()}`;
    await t.db.insertInto('archives').values(newArchive(taskId)).execute();
    await expect(
      t.db.transaction().execute(async (trx) => {
        await enqueueTuples(trx, archiveTuples(randomUUID(), randomUUID()));
        await trx
          .insertInto('archives')
          .values({ ...newArchive(taskId), object_key: 'other.wacz' })
          .execute();
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await outbox()).toEqual([]);
  });
});

describe('drainOutbox', () => {
  it('delivers, removes the rows, and the tuples answer checks in OpenFGA', async () => {
    const crawlId = randomUUID();
    const archiveId = randomUUID();
    const tuples = [...jobTuples(crawlId, 'olivia', 'acme'), ...archiveTuples(archiveId, crawlId)];
    await enqueueTuples(t.db, tuples);
    expect(await canView(store.client, { subject: 'olivia', organizations: [] }, archiveId)).toBe(false);

    const seen: DeliveredTuple[] = [];
    const r = await drainOutbox(t.db, store.client, { onBatch: (b) => seen.push(...b.delivered) });
    expect(r).toEqual({ delivered: 3, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
    expect(seen.map((d) => `${d.user} ${d.relation} ${d.object}`)).toEqual(tuples.map((x) => `${x.user} ${x.relation} ${x.object}`));
    expect(await outbox()).toEqual([]);
    for (const x of tuples) expect(await stored(x)).toBe(true);
    expect(await canView(store.client, { subject: 'olivia', organizations: [] }, archiveId)).toBe(true);
    expect(await canView(store.client, { subject: 'mia', organizations: ['acme'] }, archiveId)).toBe(true);
    expect(await canView(store.client, { subject: 'otto', organizations: ['other'] }, archiveId)).toBe(false);
  });

  it('an empty outbox delivers nothing', async () => {
    expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: 0, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
  });

  it('a tuple already in OpenFGA counts as delivered (and the new one beside it is not lost)', async () => {
    const old: Tuple = { user: 'user:olivia', relation: 'owner', object: `capture_job:${randomUUID()}` };
    const fresh: Tuple = { user: 'organization:acme', relation: 'parent', object: old.object };
    await store.client.write({ writes: [old] });
    await enqueueTuples(t.db, [old, fresh]);
    expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: 2, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
    expect(await stored(fresh)).toBe(true);
    expect(await outbox()).toEqual([]);
  });

  it('the same tuple queued twice (a retried activity) is delivered once and both rows leave', async () => {
    const tuples = jobTuples(randomUUID(), 'olivia', 'acme');
    await enqueueTuples(t.db, tuples);
    await enqueueTuples(t.db, tuples);
    expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: 4, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
    for (const x of tuples) expect(await stored(x)).toBe(true);
  });

  it('one invalid tuple in a batch: the others are delivered, it stays queued with attempts and last_error', async () => {
    const crawlId = randomUUID();
    const good1 = jobTuples(crawlId, 'olivia', 'acme');
    const unknownRelation: Tuple = { user: 'user:olivia', relation: 'no_such_relation', object: `capture_job:${crawlId}` };
    const wrongUserType: Tuple = { user: 'organization:acme', relation: 'owner', object: `capture_job:${randomUUID()}` };
    const good2 = archiveTuples(randomUUID(), crawlId);
    await enqueueTuples(t.db, [...good1, unknownRelation, wrongUserType, ...good2]);

    const r = await drainOutbox(t.db, store.client);
    expect(r).toEqual({ delivered: 3, failed: 2, remaining: 2, deadLettered: 0, dead: 0 });
    for (const x of [...good1, ...good2]) expect(await stored(x)).toBe(true);

    const left = await outbox();
    expect(left.map((row) => [row.relation, row.object, row.attempts])).toEqual([
      ['no_such_relation', unknownRelation.object, 1],
      ['owner', wrongUserType.object, 1],
    ]);
    expect(left[0]!.last_error).toMatch(/^400 .*no_such_relation/);
    expect(left[1]!.last_error).toMatch(/^400 /);

    // tried again on the next drain, never removed while OpenFGA refuses it
    expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: 0, failed: 2, remaining: 2, deadLettered: 0, dead: 0 });
    expect((await outbox()).map((row) => row.attempts)).toEqual([2, 2]);
  });

  it('a refused tuple is tried once per drain, however many lanes race for it', async () => {
    // lanes start their queries at once; one that was built before another lane failed the row
    // must not take it again after that lane's commit released it
    for (let round = 0; round < 8; round++) {
      await t.db.deleteFrom('fga_outbox').execute();
      const bad: Tuple = { user: 'user:olivia', relation: 'no_such_relation', object: `capture_job:${randomUUID()}` };
      await enqueueTuples(t.db, [bad]);
      const r = await drainOutbox(t.db, store.client, { batchSize: 1, concurrency: 8 });
      expect(r).toEqual({ delivered: 0, failed: 1, remaining: 1, deadLettered: 0, dead: 0 });
      expect((await outbox()).map((row) => row.attempts)).toEqual([1]);
    }
    await t.db.deleteFrom('fga_outbox').execute();
  });

  it('more than one write can carry: 250 tuples go in batches of at most 100', async () => {
    const tuples = Array.from({ length: 250 }, (_, i): Tuple => ({ user: `user:u${i}`, relation: 'owner', object: `capture_job:${randomUUID()}` }));
    await enqueueTuples(t.db, tuples);
    const sizes: number[] = [];
    const r = await drainOutbox(t.db, store.client, { onBatch: (b) => sizes.push(b.delivered.length) });
    expect(r).toEqual({ delivered: 250, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
    expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_TUPLES_PER_WRITE);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(250);
    for (const x of [tuples[0]!, tuples[99]!, tuples[100]!, tuples[249]!]) expect(await stored(x)).toBe(true);
  });

  it('a write and a later delete of one tuple arrive in order', async () => {
    const x: Tuple = { user: 'user:olivia', relation: 'owner', object: `capture_job:${randomUUID()}` };
    const y: Tuple = { user: 'user:olivia', relation: 'owner', object: `capture_job:${randomUUID()}` };
    await enqueueTuples(t.db, [x, y]);
    await enqueueTuples(t.db, [x], 'delete');
    await enqueueTuples(t.db, [y], 'delete');
    await enqueueTuples(t.db, [y]);
    expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: 5, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
    expect(await stored(x)).toBe(false);
    expect(await stored(y)).toBe(true);
  });

  it('with many batches in flight, a delete never overtakes the write it undoes', async () => {
    const fill = (n: number, tag: string): Tuple[] =>
      Array.from({ length: n }, (_, i) => ({ user: `user:${tag}${i}`, relation: 'owner', object: `capture_job:${randomUUID()}` }));
    const x: Tuple = { user: 'user:olivia', relation: 'owner', object: `capture_job:${randomUUID()}` };
    const y: Tuple = { user: 'user:olivia', relation: 'owner', object: `capture_job:${randomUUID()}` };
    await enqueueTuples(t.db, [x, ...fill(7, 'a')]);
    await enqueueTuples(t.db, [y], 'delete');
    await enqueueTuples(t.db, fill(3, 'b'));
    await enqueueTuples(t.db, [x], 'delete');
    await enqueueTuples(t.db, fill(4, 'c'));
    await enqueueTuples(t.db, [y]);
    await enqueueTuples(t.db, [x]);
    await enqueueTuples(t.db, [x], 'delete');
    const r = await drainOutbox(t.db, store.client, { batchSize: 2, concurrency: 6 });
    expect(r).toEqual({ delivered: 20, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
    expect(await stored(x)).toBe(false);
    expect(await stored(y)).toBe(true);
  });

  /** Runs `fn` while another connection holds outbox row `id` FOR UPDATE (another drainer's batch). */
  async function whileRowHeld(id: number, fn: () => Promise<void>): Promise<void> {
    const holder = new pg.Client({ connectionString: t.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM fga_outbox WHERE id = $1 FOR UPDATE', [id]);
      await fn();
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
    }
  }

  it('a delete waits while the write before it is held by another drainer', async () => {
    const x: Tuple = { user: 'user:olivia', relation: 'owner', object: `capture_job:${randomUUID()}` };
    const other: Tuple = { user: 'user:olivia', relation: 'owner', object: `capture_job:${randomUUID()}` };
    await enqueueTuples(t.db, [x]);
    await enqueueTuples(t.db, [x], 'delete');
    await enqueueTuples(t.db, [other]);
    const [writeRow] = await outbox();
    // another drainer has the write in flight
    await whileRowHeld(writeRow!.id, async () => {
      const r = await drainOutbox(t.db, store.client, { concurrency: 1 });
      expect(r).toEqual({ delivered: 1, failed: 0, remaining: 2, deadLettered: 0, dead: 0 });
      expect(await stored(other)).toBe(true);
      expect((await outbox()).map((row) => [row.operation, row.attempts])).toEqual([
        ['write', 0],
        ['delete', 0],
      ]);
    });
    expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: 2, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
    expect(await stored(x)).toBe(false);
  });

  it('two deletes of a tuple do not travel together past a write between them that another drainer holds', async () => {
    const x: Tuple = { user: 'user:olivia', relation: 'owner', object: `capture_job:${randomUUID()}` };
    await enqueueTuples(t.db, [x]);
    await drainOutbox(t.db, store.client);
    // delete, write, delete: x must end deleted
    await enqueueTuples(t.db, [x], 'delete');
    await enqueueTuples(t.db, [x]);
    await enqueueTuples(t.db, [x], 'delete');
    const [, writeRow] = await outbox();
    expect(writeRow!.operation).toBe('write');
    await whileRowHeld(writeRow!.id, async () => {
      // the lane sees both deletes (the write is skipped, locked); sending them as one would let
      // the write land after the last delete
      const r = await drainOutbox(t.db, store.client, { concurrency: 1 });
      expect(r.delivered).toBe(0);
      expect((await outbox()).map((row) => row.operation)).toEqual(['delete', 'write', 'delete']);
    });
    expect(await drainOutbox(t.db, store.client)).toMatchObject({ delivered: 3, remaining: 0 });
    expect(await stored(x)).toBe(false);
  });

  it('maxRows bounds one drain; the rest waits for the next', async () => {
    await enqueueTuples(
      t.db,
      Array.from({ length: 30 }, (_, i): Tuple => ({ user: `user:m${i}`, relation: 'owner', object: `capture_job:${randomUUID()}` })),
    );
    expect(await drainOutbox(t.db, store.client, { maxRows: 12, batchSize: 5 })).toEqual({ delivered: 12, failed: 0, remaining: 18, deadLettered: 0, dead: 0 });
    expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: 18, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
  });

  it('a lane locks its next batch while its Write is at OpenFGA, and has one Write out at a time', async () => {
    const tuples = Array.from({ length: 30 }, (_, i): Tuple => ({ user: `user:p${i}`, relation: 'owner', object: `capture_job:${randomUUID()}` }));
    await enqueueTuples(t.db, tuples);
    // the drain's own statements, seen as they complete
    const nextLocked = Promise.withResolvers<void>();
    let locks = 0;
    const logged = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: t.url, max: 4 }) }),
      log: (e) => {
        if (e.level === 'query' && e.query.sql.includes('FOR UPDATE SKIP LOCKED') && ++locks === 2) nextLocked.resolve();
      },
    });
    let inFlight = 0;
    let mostInFlight = 0;
    const written: string[] = [];
    const watched = Object.create(store.client) as OpenFgaClient;
    watched.write = async (body, options) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        // the first Write answers only once the lane has locked its second batch
        if (written.length === 0)
          await Promise.race([nextLocked.promise, rejectAfter(10_000, 'the second batch was not locked while the first Write was out')]);
        written.push(...(body.writes ?? []).map((w) => w.user));
        return await store.client.write(body, options);
      } finally {
        inFlight--;
      }
    };
    try {
      const r = await drainOutbox(logged, watched, { batchSize: 10, concurrency: 1 });
      expect(r).toEqual({ delivered: 30, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
    } finally {
      await logged.destroy();
    }
    expect(mostInFlight).toBe(1);
    expect(written).toEqual(tuples.map((x) => x.user));
    for (const x of [tuples[0]!, tuples[29]!]) expect(await stored(x)).toBe(true);
  });

  it("a batch that fails in Postgres after its Write fails the drain with its error; its rows stay queued, the lane's other batches are not lost", async () => {
    const tuples = Array.from({ length: 30 }, (_, i): Tuple => ({ user: `user:f${i}`, relation: 'owner', object: `capture_job:${randomUUID()}` }));
    await enqueueTuples(t.db, tuples);
    const ids = (await outbox()).map((row) => row.id);
    await sql`CREATE FUNCTION outbox_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'outbox test: row % may not leave', OLD.id; END $$`.execute(t.db);
    await sql`CREATE TRIGGER outbox_test_refuse BEFORE DELETE ON fga_outbox FOR EACH ROW
      WHEN (OLD.id = ${sql.lit(ids[14]!)}) EXECUTE FUNCTION outbox_test_refuse()`.execute(t.db);
    try {
      await expect(drainOutbox(t.db, store.client, { batchSize: 10, concurrency: 1 })).rejects.toThrow(`outbox test: row ${ids[14]} may not leave`);
    } finally {
      await sql`DROP TRIGGER outbox_test_refuse ON fga_outbox`.execute(t.db);
      await sql`DROP FUNCTION outbox_test_refuse()`.execute(t.db);
    }
    // the failed batch rolled back: its rows wait for the next drain (OpenFGA has them already: at least once)
    const left = (await outbox()).map((row) => row.id);
    expect(left.slice(0, 10)).toEqual(ids.slice(10, 20));
    expect(left.every((id) => id > ids[9]!)).toBe(true);
    expect(await stored(tuples[14]!)).toBe(true);
    expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: left.length, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
    for (const x of tuples) expect(await stored(x)).toBe(true);
  });

  it('deleting a tuple that is not there counts as delivered', async () => {
    await enqueueTuples(t.db, [{ user: 'user:nobody', relation: 'owner', object: `capture_job:${randomUUID()}` }], 'delete');
    expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: 1, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
  });

  it('a conditioned share is delivered with its condition', async () => {
    const archiveId = randomUUID();
    const grantTime = new Date(Date.now() - 30 * 60_000);
    await enqueueTuples(t.db, [
      {
        user: 'user:sam',
        relation: 'viewer',
        object: `archive:${archiveId}`,
        condition: { name: 'non_expired_grant', context: { grant_time: grantTime.toISOString(), grant_duration: '1h' } },
      },
    ]);
    expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: 1, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
    expect(await canView(store.client, { subject: 'sam', organizations: [] }, archiveId)).toBe(true);
    const later = await store.client.check({
      user: 'user:sam',
      relation: 'can_view',
      object: `archive:${archiveId}`,
      context: { current_time: new Date(grantTime.getTime() + 61 * 60_000).toISOString() },
    });
    expect(later.allowed).toBe(false);
  });

  it('concurrent drainers share the queue: every row delivered once, none twice', async () => {
    const tuples = Array.from({ length: 300 }, (_, i): Tuple => ({ user: `user:c${i}`, relation: 'owner', object: `capture_job:${randomUUID()}` }));
    await enqueueTuples(t.db, tuples);
    const ids: number[] = [];
    const results = await Promise.all(
      [0, 1, 2].map(() => drainOutbox(t.db, store.client, { batchSize: 25, onBatch: (b) => ids.push(...b.delivered.map((d) => d.id)) })),
    );
    expect(results.reduce((a, r) => a + r.delivered, 0)).toBe(300);
    expect(results.every((r) => r.failed === 0)).toBe(true);
    expect(new Set(ids).size).toBe(300);
    expect(ids).toHaveLength(300);
    expect(await outbox()).toEqual([]);
    for (const x of [tuples[0]!, tuples[150]!, tuples[299]!]) expect(await stored(x)).toBe(true);
  });

  it('OpenFGA unreachable: nothing is removed, attempts and last_error recorded', async () => {
    const tuples = jobTuples(randomUUID(), 'olivia', 'acme');
    await enqueueTuples(t.db, tuples);
    const port = await closedPort();
    const down = new OpenFgaClient({
      apiUrl: `http://127.0.0.1:${port}`,
      storeId: store.storeId,
      authorizationModelId: store.modelId,
      retryParams: { maxRetry: 1, minWaitInMs: 10 },
    });

    // one lane: both rows go in one Write (lanes that split them stop sending once one finds OpenFGA down)
    const r = await drainOutbox(t.db, down, { concurrency: 1 });
    expect(r.delivered).toBe(0);
    expect(r.failed).toBe(2);
    expect(r.remaining).toBe(2);
    expect(r.unavailable).toMatch(/ECONNREFUSED|connect/i);
    const left = await outbox();
    expect(left.map((row) => [row.tuple_user, row.relation, row.object, row.attempts])).toEqual(tuples.map((x) => [x.user, x.relation, x.object, 1]));
    expect(left.every((row) => row.last_error !== null && /ECONNREFUSED|connect/i.test(row.last_error))).toBe(true);
    for (const x of tuples) expect(await stored(x)).toBe(false);

    // deliverTuples (the activity's entry) throws so Temporal retries; the rows are still there
    await expect(deliverTuples(t.db, down)).rejects.toBeInstanceOf(OutboxUnavailableError);
    expect(await outbox()).toHaveLength(2);

    // and once OpenFGA answers, they go
    expect(await deliverTuples(t.db, store.client)).toEqual({ delivered: 2, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
    for (const x of tuples) expect(await stored(x)).toBe(true);
  });

  it('a duplicate write alone would have failed the batch without on_duplicate: ignore', async () => {
    // The reason for the whole design: OpenFGA rejects a batch containing an existing tuple and
    // writes none of it. Shown here so a server that stops behaving this way is noticed.
    const old: Tuple = { user: 'user:olivia', relation: 'owner', object: `capture_job:${randomUUID()}` };
    const fresh: Tuple = { user: 'user:olivia', relation: 'owner', object: `capture_job:${randomUUID()}` };
    await store.client.write({ writes: [old] });
    await expect(
      store.client.write({ writes: [old, fresh] }, { conflict: { onDuplicateWrites: ClientWriteRequestOnDuplicateWrites.Error } }),
    ).rejects.toThrow();
    expect(await stored(fresh)).toBe(false);
  });
});

describe('the dead letter', () => {
  it('a tuple refused OUTBOX_DEAD_AFTER times is dead-lettered, counted, and no longer holds back a later row for the same tuple', async () => {
    const archiveId = randomUUID();
    // viewer is conditioned in the model: without its condition OpenFGA refuses the tuple (400)
    const unconditioned: Tuple = { user: 'user:sam', relation: 'viewer', object: `archive:${archiveId}` };
    const share: Tuple = {
      ...unconditioned,
      condition: { name: 'non_expired_grant', context: { grant_time: new Date().toISOString(), grant_duration: '1h' } },
    };
    await enqueueTuples(t.db, [unconditioned]);
    await enqueueTuples(t.db, [share]);

    // the later row waits behind the refused one, drain after drain
    for (let n = 1; n < OUTBOX_DEAD_AFTER; n++) {
      expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: 0, failed: 1, remaining: 2, deadLettered: 0, dead: 0 });
    }
    expect(await canView(store.client, { subject: 'sam', organizations: [] }, archiveId)).toBe(false);

    // the last refusal moves it to the dead letter, and the share behind it goes through
    const r = await drainOutbox(t.db, store.client);
    expect(r).toEqual({ delivered: 1, failed: 1, remaining: 0, deadLettered: 1, dead: 1 });
    expect(await canView(store.client, { subject: 'sam', organizations: [] }, archiveId)).toBe(true);
    const [dead] = await outbox();
    expect(dead).toMatchObject({ relation: 'viewer', condition: null, refusals: OUTBOX_DEAD_AFTER, attempts: OUTBOX_DEAD_AFTER });
    expect(dead!.dead_at).not.toBeNull();
    expect(dead!.last_error).toMatch(/^400 /);

    // dead rows are not sent again
    expect(await drainOutbox(t.db, store.client)).toEqual({ delivered: 0, failed: 0, remaining: 0, deadLettered: 0, dead: 1 });
    expect(await reviveDeadLetters(t.db)).toBe(1);
    expect((await outbox()).map((row) => [row.refusals, row.dead_at])).toEqual([[0, null]]);
  });

  it('a dead-lettered row ahead of the queue is passed over: the rows behind it are delivered, it stays dead', async () => {
    await enqueueTuples(t.db, archiveTuples(randomUUID(), randomUUID()));
    await t.db.updateTable('fga_outbox').set({ dead_at: new Date(), refusals: OUTBOX_DEAD_AFTER }).execute();
    const live = Array.from({ length: 150 }, () => archiveTuples(randomUUID(), randomUUID())).flat();
    await enqueueTuples(t.db, live);
    expect(await drainOutbox(t.db, store.client, { concurrency: 2 })).toEqual({ delivered: live.length, failed: 0, remaining: 0, deadLettered: 0, dead: 1 });
    expect(await stored(live[live.length - 1]!)).toBe(true);
    expect((await outbox()).map((row) => row.dead_at === null)).toEqual([false]);
  });

  it("a batch's lock walks the primary key, even when the statistics were taken while the queue was nearly empty", async () => {
    // Analyzed while it held one row, the queue looks a few dozen rows long once thousands are queued:
    // left to itself the planner read and sorted all of them for every batch.
    await enqueueTuples(t.db, archiveTuples(randomUUID(), randomUUID()));
    await t.db.updateTable('fga_outbox').set({ dead_at: new Date() }).execute();
    await sql`ANALYZE fga_outbox`.execute(t.db);
    await enqueueTuples(t.db, Array.from({ length: 5000 }, () => archiveTuples(randomUUID(), randomUUID())).flat());
    // as a batch's transaction plans it
    const rows = await t.db.transaction().execute(async (trx) => {
      await walkIndexes(trx);
      return (await sql<{ 'QUERY PLAN': unknown }>`EXPLAIN (FORMAT JSON) ${lockNextQuery(0, MAX_TUPLES_PER_WRITE, new Set())}`.execute(trx)).rows;
    });
    // the batch by id; each row's earlier rows of its tuple by the tuple's index, not every earlier id
    // (seen after a drain of 100,000: 0.58 ms a row, 58 ms a batch, walking the primary key)
    expect(outboxScans(rows)).toEqual([
      { type: 'Index Scan', index: 'fga_outbox_pkey' },
      { type: 'Index Scan', index: 'fga_outbox_tuple_idx' },
    ]);
  });

  it("no index but the primary key can serve a batch's range and order: the tuple index is never walked for them", async () => {
    // After autovacuum counted the queue empty while a burst was queued, the planner walked the whole
    // tuple index (then keyed by the id too) for every batch and sorted the queue: 130 ms a batch at
    // 100,000 queued. Without the primary key, what else could serve the batch shows.
    await enqueueTuples(t.db, Array.from({ length: 500 }, () => archiveTuples(randomUUID(), randomUUID())).flat());
    const rollback = new Error('rolled back');
    let plan: { 'QUERY PLAN': unknown }[] = [];
    await t.db
      .transaction()
      .execute(async (trx) => {
        await sql`ALTER TABLE fga_outbox DROP CONSTRAINT fga_outbox_pkey`.execute(trx);
        await walkIndexes(trx);
        plan = (await sql<{ 'QUERY PLAN': unknown }>`EXPLAIN (FORMAT JSON) ${lockNextQuery(0, MAX_TUPLES_PER_WRITE, new Set())}`.execute(trx)).rows;
        throw rollback;
      })
      .catch((err: unknown) => {
        if (err !== rollback) throw err;
      });
    // the batch from the table itself (its scan forced, as nothing else can give it); the tuple
    // index still serves each row's count
    expect(outboxScans(plan)).toEqual([{ type: 'Seq Scan' }, { type: 'Index Scan', index: 'fga_outbox_tuple_idx' }]);
    expect(Number((await sql<{ n: number }>`SELECT count(*) AS n FROM pg_constraint WHERE conname = 'fga_outbox_pkey'`.execute(t.db)).rows[0]!.n)).toBe(1);
  });

  it('a batch deletes what OpenFGA accepted where it lies, never by reading an index of the queue, with the statistics taken while it was nearly empty', async () => {
    // Deleting by id, the planner chose a whole walk of the tuple index for each batch (44,803
    // buffers, 200 ms): vacuumed after a burst was drained, the queue's pages held no rows, and the
    // next burst, queued into those pages, looked a few rows long.
    const burst = () => Array.from({ length: 5000 }, () => archiveTuples(randomUUID(), randomUUID())).flat();
    await enqueueTuples(t.db, archiveTuples(randomUUID(), randomUUID()));
    await t.db.updateTable('fga_outbox').set({ dead_at: new Date() }).execute();
    await enqueueTuples(t.db, burst());
    await t.db.deleteFrom('fga_outbox').where('dead_at', 'is', null).execute();
    await sql`VACUUM ANALYZE fga_outbox`.execute(t.db);
    await enqueueTuples(t.db, burst());
    const { plan, locked, left } = await t.db.transaction().execute(async (trx) => {
      await walkIndexes(trx);
      const locked = (await lockNextQuery(0, MAX_TUPLES_PER_WRITE, new Set()).execute(trx)).rows;
      const plan = (await sql<{ 'QUERY PLAN': unknown }>`EXPLAIN (FORMAT JSON) ${deleteAcceptedQuery(locked)}`.execute(trx)).rows;
      const deleted = await deleteAcceptedQuery(locked).execute(trx);
      expect(deleted.rows.map((r) => Number(r.id))).toEqual(locked.map((r) => Number(r.id)));
      const left = await trx
        .selectFrom('fga_outbox')
        .select('id')
        .where(
          'id',
          'in',
          locked.map((r) => r.id),
        )
        .execute();
      return { plan, locked, left };
    });
    expect(locked).toHaveLength(MAX_TUPLES_PER_WRITE);
    expect(left).toEqual([]);
    expect(outboxScans(plan)).toEqual([{ type: 'ModifyTable' }, { type: 'Tid Scan' }]);
    // the rest of the queue is untouched: 5,000 queued, a batch deleted, the dead row kept
    expect(Number((await t.db.selectFrom('fga_outbox').select(t.db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)).toBe(5001 - MAX_TUPLES_PER_WRITE);
  });

  it('OpenFGA unreachable counts attempts, never refusals: nothing is dead-lettered by an outage', async () => {
    const port = await closedPort();
    const down = new OpenFgaClient({
      apiUrl: `http://127.0.0.1:${port}`,
      storeId: store.storeId,
      authorizationModelId: store.modelId,
      retryParams: { maxRetry: 0 },
    });
    await enqueueTuples(t.db, jobTuples(randomUUID(), 'olivia', 'acme'));
    // one lane, so both rows go in one Write every time: with more, a lane that locked one row
    // sends nothing once another lane's Write has found OpenFGA down (that row is not attempted)
    for (let n = 0; n < OUTBOX_DEAD_AFTER + 1; n++) {
      const r = await drainOutbox(t.db, down, { deadAfter: 1, concurrency: 1 });
      expect(r).toMatchObject({ delivered: 0, remaining: 2, deadLettered: 0, dead: 0 });
    }
    expect((await outbox()).map((row) => [row.attempts, row.refusals, row.dead_at])).toEqual([
      [OUTBOX_DEAD_AFTER + 1, 0, null],
      [OUTBOX_DEAD_AFTER + 1, 0, null],
    ]);
  });

  // OpenFGA up but failing: its own Postgres down (500, 503), overloaded (429), a write that
  // conflicted with another (409). None says anything of the tuples, so none may dead-letter them
  for (const status of [409, 429, 500, 503]) {
    it(`OpenFGA answering ${status} counts attempts, never refusals, and does not try the batch tuple by tuple`, async () => {
      const failing = await answeringEveryRequest(status);
      try {
        const client = new OpenFgaClient({ apiUrl: failing.url, storeId: store.storeId, authorizationModelId: store.modelId, retryParams: { maxRetry: 0 } });
        const tuples = jobTuples(randomUUID(), 'olivia', 'acme');
        await enqueueTuples(t.db, tuples);
        for (let n = 0; n < OUTBOX_DEAD_AFTER + 1; n++) {
          const r = await drainOutbox(t.db, client, { deadAfter: 1, concurrency: 1 });
          expect(r).toMatchObject({ delivered: 0, remaining: 2, deadLettered: 0, dead: 0 });
          expect(r.unavailable).toMatch(new RegExp(`^${status} `));
        }
        // one Write a drain, both rows in it: never one by one
        expect(failing.writes).toBe(OUTBOX_DEAD_AFTER + 1);
        expect((await outbox()).map((row) => [row.attempts, row.refusals, row.dead_at, row.last_error?.slice(0, 4)])).toEqual([
          [OUTBOX_DEAD_AFTER + 1, 0, null, `${status} `],
          [OUTBOX_DEAD_AFTER + 1, 0, null, `${status} `],
        ]);
        // and once OpenFGA answers, they go
        expect(await deliverTuples(t.db, store.client)).toEqual({ delivered: 2, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });
        for (const x of tuples) expect(await stored(x)).toBe(true);
      } finally {
        await failing.close();
      }
    });
  }
});

/** An OpenFGA that answers every request with `status` and an error body of OpenFGA's shape, counting the Writes. */
async function answeringEveryRequest(status: number): Promise<{ url: string; readonly writes: number; close(): Promise<void> }> {
  let writes = 0;
  const srv = createHttpServer((req, res) => {
    if (req.method === 'POST' && /\/write$/.test(req.url ?? '')) writes += 1;
    req.resume();
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'internal_error', message: `answered ${status}` }));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get writes() {
      return writes;
    },
    close: () => new Promise<void>((r) => srv.close(() => r())),
  };
}
