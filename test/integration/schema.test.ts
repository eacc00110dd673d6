// harness: not used because it tests the migrated schema of a test database alone (no API, OpenFGA store or worker).
// The schema's guarantees, asked of the real database: the constraints the application relies on
// instead of flags of its own, the generated url_hash, and migrations that are safe to repeat and
// leave nothing behind when they fail.
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.ts';
import type { NewCrawl } from '../../src/db/types.ts';
import { adminUrl, createTestDatabase, type TestDatabase } from '../support/db.ts';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});
beforeEach(async () => {
  await t.db.deleteFrom('crawls').execute();
  await t.db.deleteFrom('capture_targets').execute();
  // deleting a crawl keeps its submissions (their crawl_id set to NULL)
  await t.db.deleteFrom('capture_submissions').execute();
});

const sha256 = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

function crawl(overrides: Partial<NewCrawl> = {}): NewCrawl {
  return {
    org_id: 'acme',
    submitted_by: 'alice',
    seeds: ['https://example.com/'],
    rules: JSON.stringify([{ follow: 'same-site' }]),
    max_depth: 1,
    max_pages: 10,
    per_host_delay_ms: 2000,
    host_parallelism: 1,
    formats: ['wacz'],
    ...overrides,
  };
}

/** The pg error a statement fails with (fails the test when it succeeds). */
async function pgError(run: () => Promise<unknown>): Promise<pg.DatabaseError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(pg.DatabaseError);
    return err as pg.DatabaseError;
  }
  throw new Error('the statement succeeded');
}

/** The pg error inserting this crawl row fails with. */
const insertCrawlError = (row: NewCrawl): Promise<pg.DatabaseError> => pgError(() => t.db.insertInto('crawls').values(row).execute());

async function finish(id: string): Promise<void> {
  await t.db.updateTable('crawls').set({ state: 'succeeded', stop_reason: 'max_depth', finished_at: new Date() }).where('id', '=', id).execute();
}

describe('crawls', () => {
  it('a second running crawl fails on crawls_single_active_idx', async () => {
    await t.db.insertInto('crawls').values(crawl()).execute();
    const err = await insertCrawlError(crawl({ org_id: 'globex', submitted_by: 'bob' }));
    expect(err.code).toBe('23505');
    expect(err.constraint).toBe('crawls_single_active_idx');
    expect(err.message).toContain('crawls_single_active_idx');
    expect(await t.db.selectFrom('crawls').select('org_id').execute()).toEqual([{ org_id: 'acme' }]);
  });

  it('once the running crawl has finished, the next one may start', async () => {
    const first = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    await finish(first.id);
    await t.db.insertInto('crawls').values(crawl()).execute();
    const states = await t.db.selectFrom('crawls').select('state').orderBy('started_at').execute();
    expect(states.map((s) => s.state).sort()).toEqual(['running', 'succeeded']);
  });

  it('a crawl cannot be moved back to running beside another running one', async () => {
    const first = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    await finish(first.id);
    await t.db.insertInto('crawls').values(crawl()).execute();
    const err = await pgError(() =>
      t.db.updateTable('crawls').set({ state: 'running', stop_reason: null, finished_at: null }).where('id', '=', first.id).execute(),
    );
    expect(err.constraint).toBe('crawls_single_active_idx');
  });

  it("seeds '{}' fails the CHECK", async () => {
    const err = await insertCrawlError(crawl({ seeds: [] }));
    expect(err.code).toBe('23514');
    expect(err.constraint).toBe('crawls_seeds_check');
    // written as the literal too, not only through the driver's array encoding
    const literal = await pgError(() =>
      sql`INSERT INTO crawls (org_id, submitted_by, seeds, rules, max_depth, max_pages, per_host_delay_ms, host_parallelism, formats)
      VALUES ('acme', 'alice', '{}', '[]', 0, 1, 0, 1, '{wacz}')`.execute(t.db),
    );
    expect(literal.constraint).toBe('crawls_seeds_check');
    expect(await t.db.selectFrom('crawls').select('id').execute()).toEqual([]);
  });

  it('a NULL seed fails the same CHECK', async () => {
    const err = await insertCrawlError(crawl({ seeds: ['https://example.com/', null as never] }));
    expect(err.constraint).toBe('crawls_seeds_check');
  });

  it('state and stop_reason only take their own values, and finished_at goes with them', async () => {
    expect((await insertCrawlError(crawl({ state: 'done' as never }))).code).toBe('23514');
    expect((await insertCrawlError(crawl({ state: 'failed', stop_reason: 'timeout' as never, finished_at: new Date() }))).code).toBe('23514');
    // a finished crawl without finished_at / a running one with a stop reason
    expect((await insertCrawlError(crawl({ state: 'succeeded', stop_reason: 'completed' }))).code).toBe('23514');
    expect((await insertCrawlError(crawl({ stop_reason: 'max_pages' }))).code).toBe('23514');
  });
});

describe('crawl_pages', () => {
  it('the same url twice in one crawl conflicts; in two crawls it does not', async () => {
    const a = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    const page = { crawl_id: a.id, url: 'https://example.com/a', depth: 0, host: 'example.com' };
    await t.db.insertInto('crawl_pages').values(page).execute();
    const err = await pgError(() =>
      t.db
        .insertInto('crawl_pages')
        .values({ ...page, depth: 1 })
        .execute(),
    );
    expect(err.code).toBe('23505');
    expect(err.constraint).toBe('crawl_pages_crawl_id_url_hash_key');

    await finish(a.id);
    const b = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    await t.db
      .insertInto('crawl_pages')
      .values({ ...page, crawl_id: b.id })
      .execute();
    const rows = await t.db.selectFrom('crawl_pages').select(['crawl_id', 'url']).where('url', '=', page.url).execute();
    expect(rows.map((r) => r.crawl_id).sort()).toEqual([a.id, b.id].sort());
  });

  it('ON CONFLICT on (crawl_id, url_hash) keeps the first discovery', async () => {
    const a = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    const page = { crawl_id: a.id, url: 'https://example.com/b', depth: 0, host: 'example.com' };
    await t.db.insertInto('crawl_pages').values(page).execute();
    const again = await t.db
      .insertInto('crawl_pages')
      .values({ ...page, depth: 2 })
      .onConflict((oc) => oc.columns(['crawl_id', 'url_hash']).doNothing())
      .returning('id')
      .execute();
    expect(again).toEqual([]);
    expect((await t.db.selectFrom('crawl_pages').select('depth').where('crawl_id', '=', a.id).execute()).map((r) => r.depth)).toEqual([0]);
  });

  it('url_hash equals sha256 of the url computed in TypeScript', async () => {
    const a = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    const urls = ['https://example.com/', 'https://例え.テスト/パス?q=ü&x=1#frag', `https://example.com/${'x'.repeat(5000)}`];
    await t.db
      .insertInto('crawl_pages')
      .values(urls.map((url) => ({ crawl_id: a.id, url, depth: 0, host: new URL(url).hostname })))
      .execute();
    const rows = await t.db.selectFrom('crawl_pages').select(['url', 'url_hash']).where('crawl_id', '=', a.id).execute();
    expect(rows).toHaveLength(urls.length);
    for (const r of rows) expect(Buffer.compare(r.url_hash, sha256(r.url))).toBe(0);
  });

  it('url_hash cannot be written', async () => {
    const a = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    const err = await pgError(() =>
      sql`INSERT INTO crawl_pages (crawl_id, url, url_hash, depth, host) VALUES (${a.id}, 'https://example.com/', '\\x00', 0, 'example.com')`.execute(t.db),
    );
    expect(err.code).toBe('428C9'); // generated_always
  });
});

describe('a row names its crawl: checked once a statement (migrations/0017)', () => {
  const missing = '00000000-0000-4000-8000-00000000dead';
  /** the foreign key's own error, as the constraint gave it: its code, the table, the missing key */
  const expectMissingCrawl = (err: Awaited<ReturnType<typeof pgError>>, table: string, crawlId = missing) => {
    expect(err.code).toBe('23503');
    expect(err.message).toBe(`insert or update on table "${table}" violates its crawl reference`);
    expect(err.detail).toBe(`Key (crawl_id)=(${crawlId}) is not present in table "crawls".`);
  };
  const pages = (crawlId: string, n: number, tag = 'p') =>
    Array.from({ length: n }, (_, i) => ({ crawl_id: crawlId, url: `https://example.com/${tag}/${i}`, depth: 1, host: 'example.com' }));
  const submission = (crawlId: string | null, taskId: string) => ({
    task_id: taskId,
    org_id: 'acme',
    submitted_by: 'alice',
    crawl_id: crawlId,
    url: 'https://example.com/',
  });

  it('pages naming a crawl that is not there fail the statement with 23503, and none of them lands', async () => {
    const a = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    for (const rows of [pages(missing, 3), [...pages(a.id, 500), ...pages(missing, 1, 'q')]]) {
      expectMissingCrawl(await pgError(() => t.db.insertInto('crawl_pages').values(rows).execute()), 'crawl_pages');
    }
    expect(await t.db.selectFrom('crawl_pages').select('id').execute()).toEqual([]);
    await t.db.insertInto('crawl_pages').values(pages(a.id, 500)).execute();
    expect((await t.db.selectFrom('crawl_pages').select('id').where('crawl_id', '=', a.id).execute()).length).toBe(500);
  });

  it('a submission naming a crawl that is not there fails with 23503; one naming none is kept', async () => {
    expectMissingCrawl(
      await pgError(() => t.db.insertInto('capture_submissions').values(submission(missing, 'task-missing')).execute()),
      'capture_submissions',
    );
    await t.db.insertInto('capture_submissions').values(submission(null, 'task-none')).execute();
    const rows = await t.db.selectFrom('capture_submissions').select(['task_id', 'crawl_id']).where('task_id', 'in', ['task-missing', 'task-none']).execute();
    expect(rows).toEqual([{ task_id: 'task-none', crawl_id: null }]);
  });

  it('an UPDATE may move a row only to a crawl that is there, and a crawl keeps its id', async () => {
    const a = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    await finish(a.id);
    const b = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    await t.db.insertInto('crawl_pages').values(pages(a.id, 1)).execute();
    await t.db.insertInto('capture_submissions').values(submission(a.id, 'task-moved')).execute();
    for (const table of ['crawl_pages', 'capture_submissions'] as const) {
      expectMissingCrawl(await pgError(() => t.db.updateTable(table).set({ crawl_id: missing }).execute()), table);
      await t.db.updateTable(table).set({ crawl_id: b.id }).execute();
      expect((await t.db.selectFrom(table).select('crawl_id').execute()).map((r) => r.crawl_id)).toEqual([b.id]);
    }
    const err = await pgError(() => t.db.updateTable('crawls').set({ id: missing }).where('id', '=', b.id).execute());
    expect(err.code).toBe('23503');
  });

  it("deleting a crawl takes its pages and clears its submissions, and leaves other crawls' rows", async () => {
    const a = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    await finish(a.id);
    const b = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    await t.db
      .insertInto('crawl_pages')
      .values([...pages(a.id, 3), ...pages(b.id, 2)])
      .execute();
    await t.db
      .insertInto('capture_submissions')
      .values([submission(a.id, 'task-a'), submission(b.id, 'task-b')])
      .execute();
    await t.db.deleteFrom('crawls').where('id', '=', a.id).execute();
    const left = await t.db.selectFrom('crawl_pages').select('crawl_id').execute();
    expect(left.map((r) => r.crawl_id)).toEqual([b.id, b.id]);
    const subs = await t.db.selectFrom('capture_submissions').select(['task_id', 'crawl_id']).orderBy('task_id').execute();
    expect(subs).toEqual([
      { task_id: 'task-a', crawl_id: null },
      { task_id: 'task-b', crawl_id: b.id },
    ]);
  });

  /** Two sessions of their own on the test database, for what one transaction does to another. */
  async function withClients(run: (writer: pg.Client, deleter: pg.Client) => Promise<void>): Promise<void> {
    const writer = new pg.Client({ connectionString: t.url });
    const deleter = new pg.Client({ connectionString: t.url });
    await Promise.all([writer.connect(), deleter.connect()]);
    try {
      await run(writer, deleter);
    } finally {
      await Promise.all([writer.end(), deleter.end()]);
    }
  }

  it('rows inserted hold their crawl until their transaction ends: a delete waits, then takes them too', async () => {
    const a = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    await withClients(async (writer, deleter) => {
      await writer.query('BEGIN');
      await writer.query(
        `INSERT INTO crawl_pages (crawl_id, url, depth, host) SELECT $1, 'https://example.com/w/' || g, 1, 'example.com' FROM generate_series(1, 100) g`,
        [a.id],
      );
      await deleter.query(`SET lock_timeout = '200ms'`);
      const blocked = await pgError(() => deleter.query('DELETE FROM crawls WHERE id = $1', [a.id]));
      expect(blocked.code).toBe('55P03'); // lock_not_available: the writer's key-share lock
      await writer.query('COMMIT');
      const deleted = await deleter.query('DELETE FROM crawls WHERE id = $1', [a.id]);
      expect(deleted.rowCount).toBe(1);
      expect(await t.db.selectFrom('crawl_pages').select('id').where('crawl_id', '=', a.id).execute()).toEqual([]);
    });
  });

  it('a crawl being deleted: an insert naming it waits, then fails with 23503 once the delete commits', async () => {
    const a = await t.db.insertInto('crawls').values(crawl()).returning('id').executeTakeFirstOrThrow();
    await withClients(async (writer, deleter) => {
      await deleter.query('BEGIN');
      await deleter.query('DELETE FROM crawls WHERE id = $1', [a.id]);
      await writer.query(`SET lock_timeout = '200ms'`);
      const insert = () =>
        writer.query(`INSERT INTO crawl_pages (crawl_id, url, depth, host) VALUES ($1, 'https://example.com/late', 1, 'example.com')`, [a.id]);
      expect((await pgError(insert)).code).toBe('55P03');
      await deleter.query('COMMIT');
      expect((await pgError(insert)).code).toBe('23503');
      expect(await t.db.selectFrom('crawl_pages').select('id').where('crawl_id', '=', a.id).execute()).toEqual([]);
    });
  });
});

describe('capture_targets', () => {
  it('url_hash equals sha256 of the url computed in TypeScript', async () => {
    const urls = ['https://example.org/', 'https://example.org/ä?b=c'];
    await t.db
      .insertInto('capture_targets')
      .values(urls.map((url) => ({ org_id: 'acme', url })))
      .execute();
    const rows = await t.db.selectFrom('capture_targets').select(['url', 'url_hash']).execute();
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r.url_hash.toString('hex')).toBe(sha256(r.url).toString('hex'));
  });

  it('one url once per organization, but two organizations may share it', async () => {
    await t.db.insertInto('capture_targets').values({ org_id: 'acme', url: 'https://example.org/' }).execute();
    expect((await pgError(() => t.db.insertInto('capture_targets').values({ org_id: 'acme', url: 'https://example.org/' }).execute())).code).toBe('23505');
    await t.db.insertInto('capture_targets').values({ org_id: 'globex', url: 'https://example.org/' }).execute();
    expect(await t.db.selectFrom('capture_targets').select('org_id').orderBy('org_id').execute()).toEqual([{ org_id: 'acme' }, { org_id: 'globex' }]);
  });
});

describe('archives', () => {
  it('has no owner column and no crawl_id column', async () => {
    const cols = await sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns WHERE table_name = 'archives'`.execute(t.db);
    const names = cols.rows.map((r) => r.column_name);
    expect(names).toEqual(expect.arrayContaining(['id', 'bucket', 'object_key', 'provenance', 'captured_at', 'indexed_at']));
    expect(names.filter((n) => /owner|crawl/.test(n))).toEqual([]);
  });
});

describe('migrations', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** The project's migrations plus extra files, in a temporary directory. */
  function migrationsWith(extra: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    dirs.push(dir);
    for (const f of readdirSync(MIGRATIONS_DIR)) copyFileSync(join(MIGRATIONS_DIR, f), join(dir, f));
    for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, name), text);
    return dir;
  }

  const schema = async (url: string): Promise<string> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const r = await c.query<{ d: string }>(`SELECT string_agg(table_name || '.' || column_name || ':' || data_type, ',' ORDER BY table_name, column_name) AS d
        FROM information_schema.columns WHERE table_schema = 'public'`);
      const idx = await c.query<{ d: string }>(`SELECT string_agg(indexname, ',' ORDER BY indexname) AS d FROM pg_indexes WHERE schemaname = 'public'`);
      return `${r.rows[0]!.d}|${idx.rows[0]!.d}`;
    } finally {
      await c.end();
    }
  };

  it('running migrate again is a no-op', async () => {
    const before = await schema(t.url);
    const r = await migrate(t.url);
    expect(r.applied).toEqual([]);
    expect(r.alreadyApplied).toEqual(
      readdirSync(MIGRATIONS_DIR)
        .filter((f) => f.endsWith('.sql'))
        .sort(),
    );
    expect(await schema(t.url)).toBe(before);
  });

  it('a migration that fails half-way leaves the database as it was', async () => {
    const before = await schema(t.url);
    const dir = migrationsWith({
      '9990_bad.sql': `CREATE TABLE half_done (id int);
        ALTER TABLE crawls ADD COLUMN oops int;
        INSERT INTO capture_targets (org_id, url) VALUES ('acme', 'https://half.example/');
        SELECT * FROM no_such_table;`,
    });
    await expect(migrate(t.url, dir)).rejects.toThrow(/^migration 9990_bad\.sql failed and was rolled back: relation "no_such_table" does not exist/);
    expect(await schema(t.url)).toBe(before);
    expect(await t.db.selectFrom('capture_targets').select('url').execute()).toEqual([]);
    const names = await sql<{ name: string }>`SELECT name FROM schema_migrations`.execute(t.db);
    expect(names.rows.map((r) => r.name)).not.toContain('9990_bad.sql');
    // and it is tried again next time, not skipped
    await expect(migrate(t.url, dir)).rejects.toThrow(/9990_bad\.sql/);
  });

  it('earlier migrations in the same run stay applied; the failing one and later ones do not run', async () => {
    const dir = migrationsWith({
      '9991_good.sql': 'CREATE TABLE good_one (id int);',
      '9992_bad.sql': 'CREATE TABLE bad_one (id int); SELECT 1/0;',
      '9993_later.sql': 'CREATE TABLE later_one (id int);',
    });
    await expect(migrate(t.url, dir)).rejects.toThrow(/9992_bad\.sql failed and was rolled back: division by zero/);
    const tables = await sql<{
      t: string;
    }>`SELECT table_name AS t FROM information_schema.tables WHERE table_name IN ('good_one', 'bad_one', 'later_one')`.execute(t.db);
    expect(tables.rows.map((r) => r.t)).toEqual(['good_one']);
    await sql`DROP TABLE good_one`.execute(t.db);
    await sql`DELETE FROM schema_migrations WHERE name = '9991_good.sql'`.execute(t.db);
  });

  it('two processes migrating an empty database at once take turns (advisory lock)', async () => {
    const base = process.env.CAPTURE_LEDGER_DATABASE_URL!;
    const name = `cl_test_empty_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl(base) });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
      const url = adminUrl(base, name);
      const [a, b] = await Promise.all([migrate(url), migrate(url)]);
      const all = readdirSync(MIGRATIONS_DIR)
        .filter((f) => f.endsWith('.sql'))
        .sort();
      expect([...a.applied, ...b.applied].sort()).toEqual(all);
      expect([...a.alreadyApplied, ...b.alreadyApplied].sort()).toEqual(all);
      expect(await schema(url)).toBe(await schema(t.url));
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
