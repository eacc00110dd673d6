// archiveCandidates in "reachable" scope reads the same rows whichever way it finds a candidate's
// crawl: collected into a hash (few reachable crawls) or probed row by row (PROBE_FROM_JOBS and
// more). Both are compared with the answer computed here from the rows themselves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiveCandidates, PROBE_FROM_JOBS } from '../../src/store/archives.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { insertJob, insertManyArchives } from '../support/ledger.ts';

let tdb: TestDatabase;
/** crawl id → its archives' ids, newest first; archives of all crawls interleave in time */
const byCrawl = new Map<string, string[]>();
const order: string[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase();
  const crawls = PROBE_FROM_JOBS + 20;
  for (let i = 0; i < crawls; i++) {
    const job = await insertJob(tdb.db, { orgId: `org${i % 7}`, submittedBy: 'ann' });
    byCrawl.set(job, await insertManyArchives(tdb.db, job, 'b', 3, new Date(Date.UTC(2030, 0, 1, 0, 0, 0, i))));
  }
  const rows = await tdb.db.selectFrom('archives').select('id').orderBy('captured_at', 'desc').orderBy('id', 'desc').execute();
  order.push(...rows.map((r) => r.id));
}, 120_000);

afterAll(async () => {
  await tdb?.drop();
});

async function candidates(jobs: string[], shared: string[], limit: number): Promise<string[]> {
  const rows = await archiveCandidates(tdb.db, { limit, scope: { kind: 'reachable', jobs, shared } });
  return rows.map((r) => r.id);
}

function expected(jobs: string[], shared: string[], limit: number): string[] {
  const reached = new Set([...jobs.flatMap((j) => byCrawl.get(j) ?? []), ...shared]);
  return order.filter((id) => reached.has(id)).slice(0, limit);
}

describe('archiveCandidates: reachable scope', () => {
  it('with fewer reachable crawls than PROBE_FROM_JOBS (the hash), newest first, crawls and shares alike', async () => {
    const all = [...byCrawl.keys()];
    const jobs = all.filter((_, i) => i % 3 === 0).slice(0, PROBE_FROM_JOBS - 1);
    const shared = [byCrawl.get(all[1]!)![0]!];
    expect(jobs.length).toBeLessThan(PROBE_FROM_JOBS);
    expect(await candidates(jobs, shared, 50)).toEqual(expected(jobs, shared, 50));
  });

  it('with PROBE_FROM_JOBS reachable crawls or more (the probes), the same rows in the same order', async () => {
    const all = [...byCrawl.keys()];
    const jobs = all.slice(0, PROBE_FROM_JOBS + 5);
    const shared = [byCrawl.get(all[all.length - 1]!)![2]!];
    const got = await candidates(jobs, shared, 200);
    expect(got).toHaveLength(200);
    expect(got).toEqual(expected(jobs, shared, 200));
    // a crawl not reached contributes nothing
    expect(got).not.toContain(byCrawl.get(all[all.length - 2]!)![0]);
  });
});
