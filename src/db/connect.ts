import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { CopyingClient } from './copy.ts';
import type { Database } from './types.ts';

// bigint (int8) comes back as a string by default; counts here stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Db = Kysely<Database>;
/** what a store function runs its queries on: the database, or a transaction a caller holds */
export type Queryable = Db | Transaction<Database>;
/** a transaction a caller holds: what needs one connection throughout (a savepoint) takes this */
export type Trx = Transaction<Database>;

/**
 * Every statement the ledger sends is cut off server-side after this long, so a runaway query (a
 * lock wait, a plan gone wrong) fails with a clear error instead of holding a connection and its
 * locks for ever. The longest ordinary statement is a level's admission writes, well under it.
 * Migrations do not go through here and run without a limit.
 */
export const STATEMENT_TIMEOUT_MS = 60_000;

/**
 * An idle connection is kept this long before the pool closes it (pg's default is 10 s). A worker
 * admits a level minutes after the last, and an API answers operators between lulls: with 10 s,
 * each of them opened its connections anew, 4-5 ms and 3 ms of this process's CPU each (SCRAM),
 * plus the server's, and an admission opens six at once to read its facts. The idle connections
 * never keep the process alive (allowExitOnIdle).
 */
export const IDLE_CONNECTION_MS = 5 * 60_000;

export interface DbOptions {
  /** server-side statement_timeout in ms (default STATEMENT_TIMEOUT_MS; 0 turns it off) */
  statementTimeoutMs?: number;
}

export function createDb(databaseUrl: string, max = 10, opts: DbOptions = {}): Db {
  const pool = new pg.Pool({
    // a statement whose parameter is a CopyInput is a COPY FROM STDIN (copy.ts)
    Client: CopyingClient,
    connectionString: databaseUrl,
    max,
    statement_timeout: opts.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_CONNECTION_MS,
    allowExitOnIdle: true,
  });
  // An idle connection that the server ends (a restart, a failover, an administrator) emits
  // 'error' on the pool; unhandled, that would take the whole process down. The pool drops the
  // connection and the next query opens a new one, so logging it is all there is to do.
  pool.on('error', (err) => {
    console.warn(`postgres: idle connection closed: ${err.message}`);
  });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
