// The outbox wake against the real Postgres and OpenFGA: a committed outbox write (from any
// connection) sends one NOTIFY, a rolled-back one none, and the worker's wake drains what was
// written, what was queued before it started listening, and — after OpenFGA was unavailable —
// tries again by itself.
import { randomUUID } from 'node:crypto';
import { OpenFgaClient } from '@openfga/sdk';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueueTuples } from '../../src/fga/outbox.ts';
import { archiveTuples, type Tuple } from '../../src/fga/tuples.ts';
import { OUTBOX_CHANNEL, startOutboxWake, type OutboxWake } from '../../src/worker/outbox-wake.ts';
import { eventually } from '../support/crawls.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { createTestStore, type TestStore } from '../support/fga.ts';

let t: TestDatabase;
let store: TestStore;
let wake: OutboxWake | undefined;
beforeAll(async () => {
  [t, store] = await Promise.all([createTestDatabase(), createTestStore()]);
});
afterAll(async () => {
  await wake?.stop();
  await t?.drop();
});
beforeEach(async () => {
  await wake?.stop();
  wake = undefined;
  await t.db.deleteFrom('fga_outbox').execute();
});

const queued = async () => (await t.db.selectFrom('fga_outbox').select(['object', 'attempts']).orderBy('id').execute()).map((r) => r);
const stored = async (tuple: Tuple) => (await store.client.read({ user: tuple.user, relation: tuple.relation, object: tuple.object })).tuples.length === 1;
const drained = () => eventually(async () => ((await queued()).length === 0 ? true : undefined), 30_000, 'outbox drained');

describe('the fga_outbox notification', () => {
  it('one per committed statement, however many rows; none for a rolled-back one', async () => {
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(n.channel));
    try {
      await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
      await t.db
        .transaction()
        .execute(async (trx) => {
          await enqueueTuples(trx, archiveTuples(randomUUID(), randomUUID()));
          throw new Error('roll back');
        })
        .catch(() => undefined);
      await t.db.transaction().execute((trx) => enqueueTuples(trx, Array.from({ length: 1000 }, () => archiveTuples(randomUUID(), 'job')).flat()));
      await eventually(async () => (heard.length > 0 ? true : undefined), 10_000, 'a notification');
      // a round trip on the listener's own connection: anything else sent by now has arrived
      await listener.query('SELECT 1');
      expect(heard).toEqual([OUTBOX_CHANNEL]);
      expect((await queued()).length).toBe(1000);
    } finally {
      await listener.end();
    }
  });
});

describe('startOutboxWake', () => {
  it('drains on start what was queued before, then every write another connection commits', async () => {
    const before = archiveTuples(randomUUID(), randomUUID());
    await enqueueTuples(t.db, before);
    wake = startOutboxWake({ databaseUrl: t.url, db: t.db, fga: store.client });
    await drained();
    expect(await stored(before[0]!)).toBe(true);

    // written as the API would write it: another pool, another process for all the wake knows
    const other = new pg.Client({ connectionString: t.url });
    await other.connect();
    try {
      for (let round = 0; round < 3; round++) {
        const tuples = Array.from({ length: 150 }, () => archiveTuples(randomUUID(), 'job-w')).flat();
        await other.query('BEGIN');
        for (const x of tuples.slice(0, 3)) {
          await other.query('INSERT INTO fga_outbox (tuple_user, relation, object) VALUES ($1, $2, $3)', [x.user, x.relation, x.object]);
        }
        await other.query('COMMIT');
        await enqueueTuples(t.db, tuples.slice(3));
        await drained();
        for (const x of [tuples[0]!, tuples[149]!]) expect(await stored(x)).toBe(true);
      }
    } finally {
      await other.end();
    }
  });

  it('OpenFGA unavailable: the rows stay queued and the wake tries again by itself, without another write', async () => {
    const down = new OpenFgaClient({ apiUrl: 'http://127.0.0.1:9', storeId: store.storeId, authorizationModelId: store.modelId });
    await enqueueTuples(t.db, archiveTuples(randomUUID(), randomUUID()));
    wake = startOutboxWake({ databaseUrl: t.url, db: t.db, fga: down, retryMs: { first: 200, max: 400 } });
    // the first drain (on start) fails, and so do the retries after it: attempts keep going up
    await eventually(async () => ((await queued())[0]!.attempts >= 3 ? true : undefined), 30_000, 'three attempts');
    expect((await queued()).length).toBe(1);
    await wake.stop();
    const attempts = (await queued())[0]!.attempts;
    await new Promise((r) => setTimeout(r, 1000));
    // stopped means stopped: no retry after it
    expect((await queued())[0]!.attempts).toBe(attempts);
    wake = undefined;
  });
});
