// harness: not used because it tests COPY on a test database alone (no API, OpenFGA store or worker).
// COPY through the ledger's pool (src/db/copy.ts), asked of the real database: values come back
// byte for byte, the rows are the caller's transaction's, and copyOrElse hands a row the table
// already holds to the INSERT it falls back on, leaving nothing of the failed COPY behind.
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, type Db, type Queryable } from '../../src/db/connect.ts';
import { copyOrElse, copyRows, type CopyTarget } from '../../src/db/copy.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

let t: TestDatabase;
let other: Db;
beforeAll(async () => {
  t = await createTestDatabase();
  other = createDb(t.url, 2);
  await sql`CREATE TABLE copied (id int PRIMARY KEY, body text, n bigint, doc jsonb, at timestamptz(3))`.execute(t.db);
});
afterAll(async () => {
  await other?.destroy();
  await t?.drop();
});
beforeEach(async () => {
  await sql`TRUNCATE copied`.execute(t.db);
});

const COPIED: CopyTarget = { table: 'copied', columns: ['id', 'body', 'n', 'doc', 'at'] };
const rowsOf = async (db: Db) =>
  (await sql<{ id: number; body: string | null; n: number | null }>`SELECT id, body, n FROM copied ORDER BY id`.execute(db)).rows;

describe('copyRows', () => {
  it('stores every value as written: tabs, newlines, backslashes, \\N as text, NULL, JSON with escapes, any script', async () => {
    const bodies = ['a\tb', 'line\nbreak\r\n', 'back\\slash\\', '\\N', '', 'ünï 日本語 🎉', '"quoted", ; |', 'x'.repeat(100_000)];
    const doc = { title: 'He said "hi"\tthen\\left\n', tags: ['ä', null] };
    await copyRows(t.db, COPIED, [
      ...bodies.map((b, i) => [i, b, 2 ** 53 - 1 - i, JSON.stringify(doc), '2026-12-06T10:11:12.345Z']),
      [99, null, null, null, null],
    ]);
    const rows = (
      await sql<{ id: number; body: string | null; n: number | null; doc: unknown; at: Date | null }>`SELECT * FROM copied ORDER BY id`.execute(t.db)
    ).rows;
    expect(rows.map((r) => r.body)).toEqual([...bodies, null]);
    expect(rows.map((r) => r.n)).toEqual([...bodies.map((_, i) => 2 ** 53 - 1 - i), null]);
    expect(rows[0]!.doc).toEqual(doc);
    expect(rows[0]!.at?.toISOString()).toBe('2026-12-06T10:11:12.345Z');
    expect(rows.at(-1)).toEqual({ id: 99, body: null, n: null, doc: null, at: null });
  });

  it("runs on the caller's transaction: unseen by another connection until commit, gone with a rollback", async () => {
    await t.db.transaction().execute(async (trx) => {
      await copyRows(trx, COPIED, [[1, 'kept', 1, null, null]]);
      expect(await rowsOf(other)).toEqual([]);
    });
    expect(await rowsOf(other)).toEqual([{ id: 1, body: 'kept', n: 1 }]);
    await expect(
      t.db.transaction().execute(async (trx) => {
        await copyRows(trx, COPIED, [[2, 'rolled back', 2, null, null]]);
        throw new Error('the caller fails after the copy');
      }),
    ).rejects.toThrow('the caller fails after the copy');
    expect(await rowsOf(t.db)).toEqual([{ id: 1, body: 'kept', n: 1 }]);
  });

  it("fails whole on a value the column refuses, naming it, and the pool's connection serves the next statement", async () => {
    await expect(
      copyRows(t.db, COPIED, [
        [1, 'fine', 1, null, null],
        [2, 'bad', 'twelve' as unknown as number, null, null],
      ]),
    ).rejects.toThrow('invalid input syntax for type bigint: "twelve"');
    await expect(copyRows(t.db, { table: 'copied', columns: ['id', 'nope'] }, [[3, 'x']])).rejects.toThrow('column "nope" of relation "copied" does not exist');
    expect(await rowsOf(t.db)).toEqual([]);
    await copyRows(t.db, COPIED, [[4, 'after', 4, null, null]]);
    expect(await rowsOf(t.db)).toEqual([{ id: 4, body: 'after', n: 4 }]);
  });

  it('refuses a table or column name that is not a plain identifier, sending nothing', async () => {
    await expect(copyRows(t.db, { table: 'copied; DROP TABLE copied', columns: ['id'] }, [[1]])).rejects.toThrow(
      'COPY: "copied; DROP TABLE copied" is not a plain identifier',
    );
    await expect(copyRows(t.db, { table: 'copied', columns: ['id", "body'] }, [[1]])).rejects.toThrow('is not a plain identifier');
    expect(await rowsOf(t.db)).toEqual([]);
  });
});

describe('copyOrElse', () => {
  const copyOf = (trx: Queryable, ids: number[]) => async () => {
    await copyRows(
      trx,
      COPIED,
      ids.map((id) => [id, 'copied', id, null, null]),
    );
    return 'copied';
  };
  const insertOf = (trx: Queryable, ids: number[]) => async () => {
    await sql`INSERT INTO copied (id, body) SELECT i, 'inserted' FROM unnest(${ids}::int[]) i ON CONFLICT DO NOTHING`.execute(trx);
    return 'inserted';
  };

  it('copies when the table holds none of the rows', async () => {
    const how = await t.db.transaction().execute((trx) => copyOrElse(trx, copyOf(trx, [1, 2]), insertOf(trx, [1, 2])));
    expect(how).toBe('copied');
    expect(await rowsOf(t.db)).toEqual([
      { id: 1, body: 'copied', n: 1 },
      { id: 2, body: 'copied', n: 2 },
    ]);
  });

  it('falls back when one row is held already: nothing of the failed COPY stays, and the transaction goes on', async () => {
    await copyRows(t.db, COPIED, [[2, 'before', 0, null, null]]);
    const how = await t.db.transaction().execute(async (trx) => {
      await copyRows(trx, COPIED, [[10, 'earlier in the transaction', 10, null, null]]);
      const r = await copyOrElse(trx, copyOf(trx, [1, 2, 3]), insertOf(trx, [1, 2, 3]));
      await copyRows(trx, COPIED, [[11, 'later in the transaction', 11, null, null]]);
      return r;
    });
    expect(how).toBe('inserted');
    expect(await rowsOf(t.db)).toEqual([
      { id: 1, body: 'inserted', n: null },
      { id: 2, body: 'before', n: 0 },
      { id: 3, body: 'inserted', n: null },
      { id: 10, body: 'earlier in the transaction', n: 10 },
      { id: 11, body: 'later in the transaction', n: 11 },
    ]);
  });

  it('leaves any other failure to the transaction: no fallback, nothing written', async () => {
    let fellBack = false;
    await expect(
      t.db.transaction().execute(async (trx) => {
        await copyRows(trx, COPIED, [[1, 'first', 1, null, null]]);
        return copyOrElse(
          trx,
          () => copyRows(trx, COPIED, [[2, 'x', 'not a number' as unknown as number, null, null]]),
          async () => {
            fellBack = true;
          },
        );
      }),
    ).rejects.toThrow('invalid input syntax for type bigint');
    expect(fellBack).toBe(false);
    expect(await rowsOf(t.db)).toEqual([]);
  });
});
