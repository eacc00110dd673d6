// harness: not used because it tests the test run's own Temporal teardown (test/support/temporal-run.ts), on workflows no worker picks up.
// What a test run leaves in Temporal is ended at its end (test/support/temporal-run.ts): the
// workflows still running on the run's task queues and the schedules that start workflows on
// them — and nothing of another run's. Played here with workflows no worker will ever pick up.
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../support/config.ts';
import { eventually } from '../support/crawls.ts';
import { endRun } from '../support/temporal-run.ts';

const config = testConfig();
let connection: Connection;
let client: Client;
const started: string[] = [];

beforeAll(async () => {
  connection = await Connection.connect({ address: config.temporal.address });
  client = new Client({ connection, namespace: config.temporal.namespace });
});

afterAll(async () => {
  for (const id of started)
    await client.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
  await connection?.close();
});

async function startOn(taskQueue: string): Promise<string> {
  const workflowId = `run-end-${randomBytes(4).toString('hex')}`;
  await client.workflow.start('outboxDrain', { taskQueue, workflowId, args: [] });
  started.push(workflowId);
  return workflowId;
}

describe('the end of a test run', () => {
  it('runs in the test namespace', () => {
    expect(config.temporal.namespace).toBe(process.env.CAPTURE_LEDGER_TEMPORAL_TEST_NAMESPACE);
  });

  it("terminates the run's running workflows and deletes its schedules, and leaves another run's alone", async () => {
    const tag = randomBytes(4).toString('hex');
    const other = randomBytes(4).toString('hex');
    const mine = [await startOn(`a-${tag}-1`), await startOn(`b-${tag}-2`)];
    const theirs = await startOn(`a-${other}-1`);
    const scheduleId = `run-end-${tag}`;
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: '1h' }] },
      action: { type: 'startWorkflow', workflowType: 'outboxDrain', taskQueue: `s-${tag}-3`, args: [] },
    });
    // workflows and schedules are found through visibility, which trails a start a little (a run's
    // end comes long after its starts)
    await eventually(
      async () => {
        let listed = 0;
        for await (const s of client.schedule.list()) if (s.scheduleId === scheduleId) listed++;
        for (const id of mine) for await (const _w of client.workflow.list({ query: `WorkflowId="${id}"` })) listed++;
        return listed === 1 + mine.length ? true : undefined;
      },
      30_000,
      'the workflows and the schedule listed',
    );

    const ended = await endRun(tag);

    expect(ended.workflows.sort()).toEqual([...mine].sort());
    expect(ended.schedules).toEqual([scheduleId]);
    for (const id of mine) expect((await client.workflow.getHandle(id).describe()).status.name).toBe('TERMINATED');
    expect((await client.workflow.getHandle(theirs).describe()).status.name).toBe('RUNNING');
    await expect(client.schedule.getHandle(scheduleId).describe()).rejects.toThrow();
    // nothing of it is left running, as visibility sees it
    expect(await endRun(tag)).toEqual({ workflows: [], schedules: [] });
  });
});
