// harness: not used because this file checks one tool, kysely-codegen, against a bare migrated
// database (no API, no OpenFGA store).
//
// src/db/schema.generated.ts is what kysely-codegen writes from the migrated schema, and every
// query is typed from it. A migration that changes a table without `npm run db:types` leaves the
// committed file stale: this is where that shows.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { ROOT } from '../support/env.ts';

const run = promisify(execFile);
const CODEGEN = ROOT + 'node_modules/kysely-codegen/dist/cli/bin.js';

/** kysely-codegen --verify against a database: its exit code and what it printed. */
async function verify(url: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CODEGEN, '--verify', '--url', url], { cwd: ROOT, env: { PATH: process.env.PATH } });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, output: (e.stdout ?? '') + (e.stderr ?? '') };
  }
}

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb?.drop();
});

describe('src/db/schema.generated.ts', { timeout: 120_000 }, () => {
  it('is what kysely-codegen makes of the migrated schema', async () => {
    const { code, output } = await verify(tdb.url);
    expect(output).toMatch(/up-to-date/i);
    expect(code).toBe(0);
  });

  it('is reported stale once the schema has a column it lacks', async () => {
    await sql`ALTER TABLE crawls ADD COLUMN probe_column text`.execute(tdb.db);
    const { code, output } = await verify(tdb.url);
    expect(code).not.toBe(0);
    expect(output).toMatch(/probe_column/);
  });
});
