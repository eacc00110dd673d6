// OpenFGA never forgets a store: DeleteStore only marks it deleted, and its tuples and changelog
// stay in the datastore. Every test file makes a store of its own and every bench one or two
// (100,000 tuples and more), so on a developer's stack OpenFGA's tuple table grew to 6.9 million
// rows and 8 GB in a day of runs: every Write maintains its global indexes, and the planner's
// statistics lagged so far behind that ListObjects walked the wrong index (bench/
// support-fga-statistics.ts). The stack is ours, so the suite and the benches take the stores of
// earlier runs out of OpenFGA's datastore (CAPTURE_LEDGER_FGA_DATABASE_URL) directly, as a
// deployment never needs to: those named as tests name theirs, and any store OpenFGA marked
// deleted (the orchestration and search benches delete theirs through OpenFGA).
import pg from 'pg';
import { loadProjectEnv } from './env.ts';

/** What test runs name their stores: createTestStore's `test-…`, the fga:deploy tests' `deploy-…`. */
export const TEST_STORE_NAMES = ['test-%', 'deploy-%'] as const;

/** A store younger than this may belong to a run still going on the same stack: it is left alone. */
export const TEST_STORE_KEEP_MINUTES = 60;

/** Runs `fn` on a connection to OpenFGA's datastore. */
export async function onFgaDatastore<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  loadProjectEnv();
  const url = process.env.CAPTURE_LEDGER_FGA_DATABASE_URL;
  if (url === undefined || url === '') throw new Error('CAPTURE_LEDGER_FGA_DATABASE_URL is not set: OpenFGA’s datastore is needed (see .env.example)');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Every row of these stores, in one transaction: tuples, changelog, models, assertions, the stores. Returns the tuples removed. */
export async function purgeStores(client: pg.Client, storeIds: readonly string[]): Promise<number> {
  if (storeIds.length === 0) return 0;
  await client.query('BEGIN');
  try {
    const ids = [storeIds];
    const tuples = await client.query('DELETE FROM tuple WHERE store = ANY($1)', ids);
    for (const table of ['changelog', 'authorization_model', 'assertion']) await client.query(`DELETE FROM ${table} WHERE store = ANY($1)`, ids);
    await client.query('DELETE FROM store WHERE id = ANY($1)', ids);
    await client.query('COMMIT');
    return tuples.rowCount ?? 0;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}

/** Purges the stores earlier runs left: those test runs made (named as TEST_STORE_NAMES, older than
 * `keepMinutes`), and every store OpenFGA marked deleted, whatever its name or age (none answers). */
export async function purgeEarlierStores(keepMinutes = TEST_STORE_KEEP_MINUTES): Promise<{ stores: number; tuples: number }> {
  return onFgaDatastore(async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `SELECT id FROM store WHERE deleted_at IS NOT NULL OR (name LIKE ANY($1) AND created_at < now() - make_interval(mins => $2))`,
      [TEST_STORE_NAMES, keepMinutes],
    );
    const tuples = await purgeStores(
      client,
      rows.map((r) => r.id),
    );
    return { stores: rows.length, tuples };
  });
}

/** The line `npm test` and `npm run bench` print after purgeEarlierStores, or none when it took no store. */
export function purgeReport(purged: { stores: number; tuples: number }): string | undefined {
  if (purged.stores === 0) return undefined;
  return `OpenFGA: took ${purged.stores} stores of earlier runs (${purged.tuples} tuples) out of its datastore`;
}
