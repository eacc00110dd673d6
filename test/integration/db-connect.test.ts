// harness: not used because it tests src/db/connect.ts's statement timeout on a test database alone.
// The ledger's connections carry a server-side statement_timeout: a statement that runs too long
// is cancelled by Postgres itself (error 57014) and the connection stays usable.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, STATEMENT_TIMEOUT_MS, type Db } from '../../src/db/connect.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

let t: TestDatabase;
let short: Db;
beforeAll(async () => {
  t = await createTestDatabase();
  short = createDb(t.url, 1, { statementTimeoutMs: 200 });
});
afterAll(async () => {
  await short?.destroy();
  await t?.drop();
});

describe('statement_timeout', () => {
  it('every connection createDb opens has the default limit', async () => {
    const r = await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(t.db);
    expect(STATEMENT_TIMEOUT_MS).toBe(60_000);
    expect(r.rows[0]!.statement_timeout).toBe('1min');
  });

  it('a statement past the limit is cancelled by the server, and the connection still answers', async () => {
    await expect(sql`SELECT pg_sleep(5)`.execute(short)).rejects.toMatchObject({ code: '57014', message: expect.stringContaining('statement timeout') });
    const r = await sql<{ one: number }>`SELECT 1 AS one`.execute(short);
    expect(r.rows).toEqual([{ one: 1 }]);
  });
});
