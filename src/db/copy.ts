// COPY ... FROM STDIN on the ledger's connections, for the rows admission writes by the thousand.
// Postgres takes rows from COPY for about half the CPU the same rows cost through INSERT ...
// SELECT FROM jsonb_to_recordset (10,000 archives rows into their five indexes: 130 ms of backend
// CPU against 250 with ON CONFLICT, 200 without): no document to parse into jsonb and back out
// field by field, no plan, no speculative insertion. COPY has no ON CONFLICT, so a table that can
// already hold a row is copied into under a savepoint, and the caller's INSERT ... ON CONFLICT
// runs instead when COPY meets one (copyOrElse).
//
// Kysely sends every statement through pg's client.query(sql, parameters). The pool's clients are
// CopyingClients: a statement whose one parameter is a CopyInput streams that input to COPY
// (pg-copy-streams) instead of binding it, so a COPY runs on whatever connection the caller holds:
// the transaction's.
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { copyText, type CopyField } from './copy-text.ts';
import type { Queryable, Trx } from './connect.ts';

/** COPY's input, passed as its statement's only parameter. */
export class CopyInput {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export class CopyingClient extends pg.Client {
  // node-postgres's query() has a dozen overloads; this adds one shape and hands on the rest
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const [text, values] = args as [unknown, unknown];
    if (typeof text === 'string' && Array.isArray(values) && values.length === 1 && values[0] instanceof CopyInput) {
      return this.copyIn(text, values[0]);
    }
    return (super.query as (...a: unknown[]) => unknown)(...args);
  }

  private copyIn(text: string, input: CopyInput): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      const stream = super.query(copyFrom(text));
      stream.on('error', reject);
      stream.on('finish', () => resolve({ command: 'COPY', rowCount: stream.rowCount, oid: 0, rows: [], fields: [] }));
      stream.end(input.text);
    });
  }
}

/** A table and the columns COPY fills, in the order of each row's fields. */
export interface CopyTarget {
  table: string;
  columns: readonly string[];
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** Copies rows into the target on `db`'s connection (a transaction's, when it is one): all of them, or it fails. */
export async function copyRows(db: Queryable, target: CopyTarget, rows: readonly (readonly CopyField[])[]): Promise<void> {
  if (rows.length === 0) return;
  for (const name of [target.table, ...target.columns]) {
    // names are the ledger's own, never a caller's: anything else is a bug, not input
    if (!IDENTIFIER.test(name)) throw new Error(`COPY: ${JSON.stringify(name)} is not a plain identifier`);
  }
  const statement = `COPY ${target.table} (${target.columns.join(', ')}) FROM STDIN`;
  await db.executeQuery(CompiledQuery.raw(statement, [new CopyInput(copyText(rows))]));
}

/** SQLSTATE of a unique violation: COPY met a row the table already holds. */
const UNIQUE_VIOLATION = '23505';

/**
 * Tries `copy` under a savepoint; when it meets a row the table already holds (a repeated
 * admission, a reconcile that got there first), the savepoint is rolled back and `orElse` (the
 * INSERT ... ON CONFLICT the rows went through before) writes them instead. Any other failure is
 * the transaction's.
 */
export async function copyOrElse<T>(trx: Trx, copy: () => Promise<T>, orElse: () => Promise<T>): Promise<T> {
  await trx.executeQuery(CompiledQuery.raw('SAVEPOINT copy_rows'));
  try {
    const copied = await copy();
    await trx.executeQuery(CompiledQuery.raw('RELEASE SAVEPOINT copy_rows'));
    return copied;
  } catch (err) {
    if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
    await trx.executeQuery(CompiledQuery.raw('ROLLBACK TO SAVEPOINT copy_rows'));
    return orElse();
  }
}
