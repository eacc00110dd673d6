// Shared by the outbox bench: the bare OpenFGA Write (batches of 100, `concurrency` in flight,
// on_duplicate ignore as the drain sends them), and an OpenFGA store that already holds many
// tuples, kept between runs under a fixed name so its minutes-long preload is paid once.
import { randomUUID } from 'node:crypto';
import { ClientWriteRequestOnDuplicateWrites, ClientWriteRequestOnMissingDeletes, OpenFgaClient } from '@openfga/sdk';
import { mapLimit } from '../src/domain/map-limit.ts';
import { MAX_TUPLES_PER_WRITE } from '../src/fga/outbox.ts';
import { archiveTuples, type Tuple } from '../src/fga/tuples.ts';
import { createTestStore, modelJson, type TestStore } from '../test/support/fga.ts';
import { onFgaDatastore, purgeStores } from '../test/support/fga-datastore.ts';
import { loadProjectEnv } from '../test/support/env.ts';

/** `count` archive parent tuples of one job (a new one unless given), as admission queues them. */
export function archiveParentTuples(count: number, job: string = randomUUID()): Tuple[] {
  return Array.from({ length: count }, () => archiveTuples(randomUUID(), job)).flat();
}

/** Writes `tuples` with OpenFGA's own Write, 100 a request, `concurrency` requests in flight. Returns seconds. */
export async function bareWrite(fga: OpenFgaClient, tuples: Tuple[], concurrency: number): Promise<number> {
  const batches: Tuple[][] = [];
  for (let i = 0; i < tuples.length; i += MAX_TUPLES_PER_WRITE) batches.push(tuples.slice(i, i + MAX_TUPLES_PER_WRITE));
  const conflict = { onDuplicateWrites: ClientWriteRequestOnDuplicateWrites.Ignore, onMissingDeletes: ClientWriteRequestOnMissingDeletes.Ignore };
  const t = performance.now();
  await mapLimit(batches, concurrency, (writes) => fga.write({ writes }, { conflict }));
  return (performance.now() - t) / 1000;
}

/** A tuple written last by a complete preload: its presence says the store holds `size` tuples. */
const markerOf = (size: number): Tuple => ({ user: 'user:bench-preload', relation: 'owner', object: `capture_job:bench-preload-${size}` });

async function findStore(admin: OpenFgaClient, name: string): Promise<string | undefined> {
  let token: string | undefined;
  do {
    const page = await admin.listStores({ pageSize: 100, ...(token ? { continuationToken: token } : {}) });
    const hit = page.stores.find((s) => s.name === name);
    if (hit) return hit.id;
    token = page.continuation_token || undefined;
  } while (token);
  return undefined;
}

async function hasMarker(client: OpenFgaClient, size: number): Promise<boolean> {
  const m = markerOf(size);
  const r = await client.read({ user: m.user, relation: m.relation, object: m.object });
  return r.tuples.length > 0;
}

/**
 * Takes out of the kept store what earlier runs wrote after its preload (each run adds its
 * 600,000 and more), straight from OpenFGA's datastore, and vacuums what that left: measured into
 * a store of `size` tuples, not one that grows by a run's writes every time (it held 3.6 million
 * after a day of runs).
 */
async function backToPreload(storeId: string, size: number): Promise<void> {
  const m = markerOf(size);
  const [type, id] = m.object.split(':') as [string, string];
  await onFgaDatastore(async (c) => {
    // as text: a Date would cut the microseconds, and the marker itself would pass for later
    const marker = await c.query<{ at: string }>(
      'SELECT inserted_at::text AS at FROM tuple WHERE store = $1 AND object_type = $2 AND object_id = $3 AND relation = $4 AND _user = $5',
      [storeId, type, id, m.relation, m.user],
    );
    const args = [storeId, marker.rows[0]!.at];
    const gone = await c.query('DELETE FROM tuple WHERE store = $1 AND inserted_at > $2::timestamptz', args);
    await c.query('DELETE FROM changelog WHERE store = $1 AND inserted_at > $2::timestamptz', args);
    // now, not by autovacuum in the middle of the next measurement (seen: the bare Write at 1,765 tuples/s, 13,472 the run before)
    if ((gone.rowCount ?? 0) > 0) await c.query('VACUUM (ANALYZE) tuple, changelog');
  });
}

/** Tuples in the store, counted in OpenFGA's datastore. */
export async function tuplesInStore(storeId: string): Promise<number> {
  return onFgaDatastore(async (c) => Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM tuple WHERE store = $1', [storeId])).rows[0]!.n));
}

async function preload(client: OpenFgaClient, size: number, concurrency: number, log: (msg: string) => void): Promise<void> {
  const chunk = 50_000;
  for (let done = 0; done < size; done += chunk) {
    const seconds = await bareWrite(client, archiveParentTuples(Math.min(chunk, size - done)), concurrency);
    log(`outbox bench: preloaded ${done + Math.min(chunk, size - done)} of ${size} tuples (${Math.round(chunk / seconds)}/s)`);
  }
  await client.write({ writes: [markerOf(size)] });
}

/**
 * The store named `bench-outbox-<size>` holding `size` tuples: reused when a complete one exists,
 * otherwise (or with `fresh`) made and filled now with the bare Write, `concurrency` in flight.
 */
export async function preloadedStore(size: number, opts: { fresh?: boolean; concurrency?: number; log?: (msg: string) => void } = {}): Promise<TestStore> {
  loadProjectEnv();
  const apiUrl = process.env.CAPTURE_LEDGER_FGA_API_URL!;
  const admin = new OpenFgaClient({ apiUrl });
  const name = `bench-outbox-${size}`;
  const existing = await findStore(admin, name);
  if (existing !== undefined && opts.fresh !== true) {
    const scoped = new OpenFgaClient({ apiUrl, storeId: existing });
    const model = await scoped.writeAuthorizationModel(modelJson());
    const client = new OpenFgaClient({ apiUrl, storeId: existing, authorizationModelId: model.authorization_model_id });
    if (await hasMarker(client, size)) {
      await backToPreload(existing, size);
      return { apiUrl, storeId: existing, modelId: model.authorization_model_id, client };
    }
  }
  // out of the datastore now: OpenFGA's DeleteStore keeps every row, and the preload and the
  // measurement after it would run beside 1,000,000 dead tuples until the next run's purge
  if (existing !== undefined) await onFgaDatastore((c) => purgeStores(c, [existing]));
  const store = await createTestStore(name);
  await preload(store.client, size, opts.concurrency ?? 8, opts.log ?? ((m) => console.error(m)));
  return store;
}
