// harness: not used because it tests the level-dispatch store functions on a test database alone.
// crawl_level_dispatches against the real database: a level's turn to signal its workflow a
// heartbeat (at most one per gap, given back when the signal failed, free again after a
// re-dispatch), and the report slots.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordDispatch, releaseHeartbeatTurn, takeHeartbeatTurn, takeReportSlot } from '../../src/store/level-dispatches.ts';
import { insertTestCrawl } from '../support/crawl-rows.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

let tdb: TestDatabase;
let crawlId: string;

beforeAll(async () => {
  tdb = await createTestDatabase();
  crawlId = await insertTestCrawl(tdb.db, { maxDepth: 3 });
});

afterAll(async () => {
  await tdb?.drop();
});

const dispatch = (depth: number) =>
  recordDispatch(tdb.db, {
    crawlId,
    depth,
    capabilityHash: randomBytes(32),
    artifactPrefix: `crawls/${crawlId}/${depth}/`,
    deadline: new Date(Date.now() + 60_000),
  });
/** moves the level's last heartbeat signal `ms` into the past */
const age = (depth: number, ms: number) =>
  sql`UPDATE crawl_level_dispatches SET heartbeat_signalled_at = heartbeat_signalled_at - make_interval(secs => ${ms / 1000}) WHERE crawl_id = ${crawlId} AND depth = ${depth}`.execute(
    tdb.db,
  );

describe("a level's turn to signal a heartbeat", () => {
  it('goes to exactly one of many heartbeats at once, and again only after the gap', async () => {
    await dispatch(0);
    const turns = await Promise.all(Array.from({ length: 25 }, () => takeHeartbeatTurn(tdb.db, crawlId, 0, 15_000)));
    expect(turns.filter(Boolean)).toHaveLength(1);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 0, 15_000)).toBe(false);
    await age(0, 14_000);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 0, 15_000)).toBe(false);
    await age(0, 1_000);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 0, 15_000)).toBe(true);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 0, 15_000)).toBe(false);
  });

  it('is given back when the signal could not be sent, and is free after a re-dispatch', async () => {
    await dispatch(1);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 1, 15_000)).toBe(true);
    await releaseHeartbeatTurn(tdb.db, crawlId, 1);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 1, 15_000)).toBe(true);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 1, 15_000)).toBe(false);
    // the first heartbeat after a re-dispatch always reaches the workflow: it shortens the wait
    await dispatch(1);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 1, 15_000)).toBe(true);
  });

  it('belongs to one level: another level, or a level never dispatched, has its own (or none)', async () => {
    await dispatch(2);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 2, 15_000)).toBe(true);
    await dispatch(3);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 3, 15_000)).toBe(true);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 2, 15_000)).toBe(false);
    expect(await takeHeartbeatTurn(tdb.db, crawlId, 9, 15_000)).toBe(false);
  });
});

describe('report slots', () => {
  it('a level takes at most `max` reports, even when they race', async () => {
    await dispatch(4);
    const slots = await Promise.all(Array.from({ length: 12 }, () => takeReportSlot(tdb.db, crawlId, 4, 5)));
    expect(slots.filter((n) => n !== null).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(await takeReportSlot(tdb.db, crawlId, 4, 5)).toBeNull();
  });
});
