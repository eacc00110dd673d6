// Shared by the crawl benchmarks: a fresh, migrated database of their own (dropped afterwards),
// the project's configuration, and percentiles.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb, type Db } from '../src/db/connect.ts';
import { migrate } from '../src/db/migrate.ts';
import { insertCrawl } from '../src/store/crawls.ts';
import { testConfig } from '../test/support/config.ts';

/** The project's configuration as the tests read it (.env.example, .env, .env.local: the later wins), then overrides. */
export const benchConfig = testConfig;

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface BenchDatabase {
  url: string;
  db: Db;
  drop(): Promise<void>;
}

/** Bench databases are named cl_bench_<created, ms in base 36>_<random>. */
const BENCH_DATABASE = /^cl_bench_([0-9a-z]+)_[0-9a-f]+$/;
/** A bench database this old was left by a killed run: a measurement takes minutes. */
const LEFTOVER_DATABASE_MS = 60 * 60 * 1000;

/**
 * A fresh, migrated database, dropped by drop(). The databases killed runs left (an hour old or
 * more, no session on them) are dropped first.
 */
export async function createBenchDatabase(baseUrl: string): Promise<BenchDatabase> {
  const name = `cl_bench_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: withDatabase(baseUrl, 'postgres') });
  await admin.connect();
  try {
    await dropLeftovers(admin);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(baseUrl, name);
  await migrate(url);
  const db = createDb(url, 10);
  return {
    url,
    db,
    async drop() {
      await db.destroy();
      const c = new pg.Client({ connectionString: withDatabase(baseUrl, 'postgres') });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

async function dropLeftovers(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string; sessions: number }>(
    `SELECT d.datname, (SELECT count(*)::int FROM pg_stat_activity a WHERE a.datname = d.datname) AS sessions FROM pg_database d WHERE d.datname LIKE 'cl\\_bench\\_%'`,
  );
  for (const { datname, sessions } of rows) {
    const created = BENCH_DATABASE.exec(datname)?.[1];
    if (sessions > 0 || created === undefined || Date.now() - parseInt(created, 36) < LEFTOVER_DATABASE_MS) continue;
    // a run that connects meanwhile keeps its database: the drop fails and is left for next time
    await admin.query(`DROP DATABASE IF EXISTS ${datname}`).catch(() => undefined);
  }
}

/**
 * A crawl of `urls` whose level 0 is pending, as the admission benches start one (one level deep,
 * same-origin links followed). A crawl still running is ended first: one runs at a time.
 */
export async function startBenchCrawl(db: Db, urls: string[], maxPages: number): Promise<string> {
  await db.updateTable('crawls').set({ state: 'succeeded', stop_reason: 'max_depth', finished_at: new Date() }).where('state', '=', 'running').execute();
  const { id } = await insertCrawl(db, {
    orgId: 'bench',
    submittedBy: 'bench',
    seeds: urls,
    rules: [{ follow: 'same-origin' }],
    maxDepth: 1,
    maxPages,
    perHostDelayMs: 0,
    hostParallelism: 4,
    formats: ['wacz'],
    signing: false,
    seedLevel: { take: urls, cut: [] },
  });
  return id;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i]!;
}

/** Prints records as JSON lines when a bench file is run directly. */
export function printLines(records: unknown[]): void {
  for (const r of records) console.log(JSON.stringify(r));
}
