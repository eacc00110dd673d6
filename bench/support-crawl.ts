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

export async function createBenchDatabase(baseUrl: string): Promise<BenchDatabase> {
  const name = `cl_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: withDatabase(baseUrl, 'postgres') });
  await admin.connect();
  try {
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

export const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** Prints records as JSON lines when a bench file is run directly. */
export function printLines(records: unknown[]): void {
  for (const r of records) console.log(JSON.stringify(r));
}
