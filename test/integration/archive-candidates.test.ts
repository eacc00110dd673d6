// archiveCandidates in "reachable" scope reads the same rows whichever way it finds a candidate's
// crawl: collected into a hash (few reachable crawls) or probed row by row (PROBE_FROM_JOBS and
// more). Both are compared with the answer computed here from the rows themselves. A reached
// crawl's archive whose parent tuple is still in the outbox (OpenFGA does not hold it yet) is read
// by neither.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiveCandidates, PROBE_FROM_JOBS } from '../../src/store/archives.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { insertJob, insertManyArchives } from '../support/ledger.ts';
import { enqueueTuples } from '../../src/fga/outbox.ts';
import { archiveTuples } from '../../src/fga/tuples.ts';

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
  // as if OpenFGA had accepted every tuple queued (this test has no OpenFGA): delivered, they leave the outbox
  await tdb.db.deleteFrom('fga_outbox').execute();
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

  it('an archive of a reached crawl whose parent tuple waits in the outbox is read by neither form, unless shared; once delivered it is', async () => {
    const all = [...byCrawl.keys()];
    const crawl = all[0]!;
    const pending = byCrawl.get(crawl)![0]!;
    await enqueueTuples(tdb.db, archiveTuples(pending, crawl));
    try {
      for (const jobs of [all.slice(0, 3), all.slice(0, PROBE_FROM_JOBS + 5)]) {
        const got = await candidates(jobs, [], 400);
        expect(got).not.toContain(pending);
        expect(got).toEqual(
          expected(jobs, [], 401)
            .filter((id) => id !== pending)
            .slice(0, 400),
        );
        // shared directly, it is OpenFGA's answer on its own
        expect(await candidates(jobs, [pending], 400)).toContain(pending);
      }
    } finally {
      await tdb.db.deleteFrom('fga_outbox').execute();
    }
    expect(await candidates(all.slice(0, 3), [], 400)).toContain(pending);
  });
});
