// The outbox-drain schedule the worker creates: idempotent creation, the worker's options, and a
// triggered run that really delivers queued tuples to OpenFGA.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { enqueueTuples } from '../../src/fga/outbox.ts';
import { ensureSchedules, outboxDrainSchedule } from '../../src/temporal/schedules.ts';
import { testApiConfig } from '../support/api.ts';
import { eventually } from '../support/crawls.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { createTestStore, type TestStore } from '../support/fga.ts';
import { startTestWorker, uniqueTaskQueue, type TestWorker } from '../support/temporal.ts';

let tdb: TestDatabase;
let store: TestStore;
let tw: TestWorker;
const taskQueue = uniqueTaskQueue('outbox-schedule');
const id = `outbox-drain-test-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  [tdb, store] = await Promise.all([createTestDatabase(), createTestStore()]);
  const config = testApiConfig({ tdb, store, env: { CAPTURE_LEDGER_TEMPORAL_TASK_QUEUE: taskQueue } });
  // no outbox wake: the triggered schedule is what must deliver
  tw = await startTestWorker({ config, db: tdb.db, fga: store.client, outboxWake: false });
});

afterAll(async () => {
  await tw?.client.schedule
    .getHandle(id)
    .delete()
    .catch(() => undefined);
  await tw?.stop();
  await tdb?.drop();
});

describe('outbox-drain schedule', () => {
  it('is created once, updated after, runs outboxDrain every minute, and delivers when triggered', async () => {
    // the worker's own options, under an id of this test's so the real schedule is untouched
    const base = outboxDrainSchedule(taskQueue);
    expect(base.scheduleId).toBe('outbox-drain');
    const options = { ...base, scheduleId: id, action: { ...base.action, workflowId: id } } as typeof base;
    expect(await ensureSchedules(tw.client, [options])).toEqual([{ id, action: 'created' }]);
    expect(await ensureSchedules(tw.client, [options])).toEqual([{ id, action: 'updated' }]);
    const desc = await tw.client.schedule.getHandle(id).describe();
    expect(desc.spec.intervals?.map((i) => i.every)).toEqual([60_000]);
    expect(desc.action).toMatchObject({ type: 'startWorkflow', workflowType: 'outboxDrain', taskQueue });

    await enqueueTuples(tdb.db, [{ user: 'user:alice', relation: 'owner', object: 'capture_job:scheduled' }]);
    await tw.client.schedule.getHandle(id).trigger();
    await eventually(async () => ((await tdb.db.selectFrom('fga_outbox').select('id').execute()).length === 0 ? true : undefined), 30_000, 'outbox drained');
    const t = await store.client.read({ object: 'capture_job:scheduled' });
    expect(t.tuples.map((x) => `${x.key.user} ${x.key.relation}`)).toEqual(['user:alice owner']);
  });
});
