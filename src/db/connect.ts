import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './types.ts';

// bigint (int8) comes back as a string by default; counts here stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Db = Kysely<Database>;

export function createDb(databaseUrl: string, max = 10): Db {
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  // An idle connection that the server ends (a restart, a failover, an administrator) emits
  // 'error' on the pool; unhandled, that would take the whole process down. The pool drops the
  // connection and the next query opens a new one, so logging it is all there is to do.
  pool.on('error', (err) => {
    console.warn(`postgres: idle connection closed: ${err.message}`);
  });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
