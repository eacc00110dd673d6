// harness: not used because it tests src/db/connect.ts's statement timeout on a test database alone.
// The ledger's connections carry a server-side statement_timeout: a statement that runs too long
// is cancelled by Postgres itself (error 57014) and the connection stays usable. Idle connections
// are kept minutes, not pg's 10 s, and never hold a process open.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, IDLE_CONNECTION_MS, STATEMENT_TIMEOUT_MS, type Db } from '../../src/db/connect.ts';
import { run } from '../support/archive-tools.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { ROOT } from '../support/env.ts';

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

describe('idle connections', () => {
  it('are kept past pg’s default 10 s: a query after 11 s idle runs on the same backend', async () => {
    const one = createDb(t.url, 1);
    try {
      const pid = async () => (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(one)).rows[0]!.pid;
      const before = await pid();
      // the idle time itself is what is tested
      await new Promise((r) => setTimeout(r, 11_000));
      expect(await pid()).toBe(before);
      expect(IDLE_CONNECTION_MS).toBeGreaterThanOrEqual(60_000);
    } finally {
      await one.destroy();
    }
  }, 30_000);

  it('never keep the process alive: a script that queries and never closes its pool exits by itself', async () => {
    const script = `import { sql } from 'kysely'; import { createDb } from './src/db/connect.ts';
      const db = createDb(process.env.URL); const r = await sql\`SELECT 41 + 1 AS n\`.execute(db); console.log(r.rows[0].n);`;
    // killed when it would otherwise hang (its code is then null)
    const { code, out } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { ...process.env, URL: t.url },
      timeout: 20_000,
      killSignal: 'SIGKILL',
    }).then(
      (r) => ({ code: 0 as number | null, out: r.stdout }),
      (e: { code?: number | null; stdout?: string }) => ({ code: e.code ?? null, out: e.stdout ?? '' }),
    );
    expect({ code, out: out.trim() }).toEqual({ code: 0, out: '42' });
  }, 30_000);
});
