// Each test file gets its own database, cloned from a migrated template (made once by the
// integration global setup), so files run in parallel and the single-running-crawl index holds
// per file.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createDb, type Db } from '../../src/db/connect.ts';
import { loadProjectEnv } from './env.ts';

/** One migrated template per test run (global setup names it), so two runs at once never race
 * on creating or dropping the same template. */
export function newTemplateName(): string {
  return `capture_ledger_template_${randomBytes(4).toString('hex')}`;
}

export function adminUrl(databaseUrl: string, database = 'postgres'): string {
  const u = new URL(databaseUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface TestDatabase {
  url: string;
  name: string;
  db: Db;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  loadProjectEnv();
  const base = process.env.CAPTURE_LEDGER_DATABASE_URL!;
  const name = `cl_test_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl(base) });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDb')}`);
  } finally {
    await admin.end();
  }
  const url = adminUrl(base, name);
  const db = createDb(url);
  return {
    url,
    name,
    db,
    async drop() {
      await db.destroy();
      const c = new pg.Client({ connectionString: adminUrl(base) });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
