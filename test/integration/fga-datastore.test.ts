// The suite's clean-up of OpenFGA's datastore, against the stack's OpenFGA and its Postgres: the
// stores earlier runs left go entirely, tuples and changelog and models with them, and so does any
// store OpenFGA marked deleted; a store of the run going on, and any other store not named as the
// tests name theirs, stay and still answer.
import { randomBytes } from 'node:crypto';
import { OpenFgaClient } from '@openfga/sdk';
import { describe, expect, it } from 'vitest';
import { createTestStore } from '../support/fga.ts';
import { onFgaDatastore, purgeEarlierStores, purgeReport, purgeStores, TEST_STORE_KEEP_MINUTES } from '../support/fga-datastore.ts';
import { loadProjectEnv } from '../support/env.ts';
import { TUPLE_ANALYZE_ROWS } from '../../scripts/lib/fga-migrate.mjs';

loadProjectEnv();
const apiUrl = process.env.CAPTURE_LEDGER_FGA_API_URL!;

/** A store named `name` with the project's model and `tuples` owner tuples. */
async function storeWithTuples(name: string, tuples: number): Promise<{ id: string; client: OpenFgaClient }> {
  const store = await createTestStore(name);
  const writes = Array.from({ length: tuples }, (_, i) => ({ user: `user:u${i}`, relation: 'owner', object: `capture_job:j${i}` }));
  await store.client.write({ writes });
  return { id: store.storeId, client: store.client };
}

async function backdate(storeId: string, minutes: number): Promise<void> {
  await onFgaDatastore((c) => c.query(`UPDATE store SET created_at = now() - make_interval(mins => $2) WHERE id = $1`, [storeId, minutes]));
}

/** The datastore's rows of a store, table by table. */
async function rowsOf(storeId: string): Promise<Record<string, number>> {
  return onFgaDatastore(async (c) => {
    const count = async (sql: string) => Number((await c.query<{ n: string }>(sql, [storeId])).rows[0]!.n);
    return {
      tuple: await count('SELECT count(*) AS n FROM tuple WHERE store = $1'),
      changelog: await count('SELECT count(*) AS n FROM changelog WHERE store = $1'),
      authorization_model: await count('SELECT count(*) AS n FROM authorization_model WHERE store = $1'),
      store: await count('SELECT count(*) AS n FROM store WHERE id = $1'),
    };
  });
}

describe('purging the stores of earlier runs', () => {
  it('takes every row of an old test store and of a deleted store out of the datastore, and leaves young and other stores answering', async () => {
    const tag = randomBytes(4).toString('hex');
    const old = await storeWithTuples(`test-${tag}-old`, 30);
    const oldDeploy = await storeWithTuples(`deploy-${tag}`, 3);
    const young = await storeWithTuples(`test-${tag}-young`, 5);
    const other = await storeWithTuples(`keep-${tag}`, 4);
    // a bench's store, deleted through OpenFGA a moment ago: marked deleted, its rows all still there
    const deleted = await storeWithTuples(`bench-${tag}`, 7);
    await deleted.client.deleteStore();
    expect(await rowsOf(deleted.id)).toEqual({ tuple: 7, changelog: 7, authorization_model: 1, store: 1 });
    await backdate(old.id, TEST_STORE_KEEP_MINUTES + 5);
    await backdate(oldDeploy.id, TEST_STORE_KEEP_MINUTES + 5);
    await backdate(other.id, TEST_STORE_KEEP_MINUTES + 5);
    expect((await rowsOf(old.id)).tuple).toBe(30);

    const purged = await purgeEarlierStores();
    expect(purged.stores).toBeGreaterThanOrEqual(3);
    expect(purged.tuples).toBeGreaterThanOrEqual(40);
    expect(await rowsOf(old.id)).toEqual({ tuple: 0, changelog: 0, authorization_model: 0, store: 0 });
    expect(await rowsOf(oldDeploy.id)).toEqual({ tuple: 0, changelog: 0, authorization_model: 0, store: 0 });
    expect(await rowsOf(deleted.id)).toEqual({ tuple: 0, changelog: 0, authorization_model: 0, store: 0 });
    expect(await rowsOf(young.id)).toEqual({ tuple: 5, changelog: 5, authorization_model: 1, store: 1 });
    expect(await rowsOf(other.id)).toEqual({ tuple: 4, changelog: 4, authorization_model: 1, store: 1 });
    expect((await young.client.check({ user: 'user:u4', relation: 'owner', object: 'capture_job:j4' })).allowed).toBe(true);
    expect((await other.client.check({ user: 'user:u3', relation: 'owner', object: 'capture_job:j3' })).allowed).toBe(true);
    // OpenFGA no longer knows the purged store
    await expect(new OpenFgaClient({ apiUrl, storeId: old.id }).getStore()).rejects.toThrow();

    await onFgaDatastore((c) => purgeStores(c, [young.id, other.id]));
    expect((await rowsOf(other.id)).store).toBe(0);
  });

  it('says what a purge took, and nothing when it took no store', () => {
    expect(purgeReport({ stores: 3, tuples: 41 })).toBe('OpenFGA: took 3 stores of earlier runs (41 tuples) out of its datastore');
    expect(purgeReport({ stores: 0, tuples: 0 })).toBeUndefined();
  });
});

describe("OpenFGA's datastore as fga:migrate leaves it", () => {
  it('has its tuple table analyzed every 20,000 changed rows, and autovacuum looking every 10 s', async () => {
    // a crawl's archive tuples share their job: until the statistics know the job, every Write's
    // read of the tuples it names scans all of the job's (scripts/lib/fga-migrate.mjs)
    const { reloptions, naptime } = await onFgaDatastore(async (c) => ({
      reloptions: (await c.query<{ reloptions: string[] | null }>(`SELECT reloptions FROM pg_class WHERE oid = 'tuple'::regclass`)).rows[0]!.reloptions,
      naptime: (await c.query<{ autovacuum_naptime: string }>('SHOW autovacuum_naptime')).rows[0]!.autovacuum_naptime,
    }));
    expect([...(reloptions ?? [])].sort()).toEqual([`autovacuum_analyze_scale_factor=0`, `autovacuum_analyze_threshold=${TUPLE_ANALYZE_ROWS}`]);
    expect(TUPLE_ANALYZE_ROWS).toBe(20_000);
    expect(naptime).toBe('10s');
  });
});
