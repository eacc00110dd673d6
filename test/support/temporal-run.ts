// What a test run leaves in Temporal, ended. Every task queue a test makes (uniqueTaskQueue in
// test/support/temporal.ts) carries the run's tag; the integration global teardown terminates
// the workflows still running on the run's queues and deletes the schedules that start workflows
// on them, so `npm test` leaves nothing running, and two runs side by side leave each other alone.
import { Client, Connection } from '@temporalio/client';
import { loadProjectEnv } from './env.ts';

/** True for a task queue uniqueTaskQueue made in the run tagged `tag`. */
export const queueOfRun =
  (tag: string) =>
  (taskQueue: string): boolean =>
    taskQueue.includes(`-${tag}-`);

/**
 * Terminates the running workflows whose task queue `belongs`, and deletes the schedules that
 * start workflows on such a queue. Visibility trails the server a little, so it lists again until
 * nothing of them is left running (bounded). Returns what it ended.
 */
export async function endWorkflows(
  client: Client,
  belongs: (taskQueue: string) => boolean,
  reason: string,
  narrowQuery = '',
): Promise<{ workflows: string[]; schedules: string[] }> {
  const ended = { workflows: [] as string[], schedules: [] as string[] };
  for await (const s of client.schedule.list()) {
    const d = await client.schedule
      .getHandle(s.scheduleId)
      .describe()
      .catch(() => undefined);
    if (d?.action.type === 'startWorkflow' && belongs(d.action.taskQueue)) {
      await client.schedule
        .getHandle(s.scheduleId)
        .delete()
        .catch(() => undefined);
      ended.schedules.push(s.scheduleId);
    }
  }
  const deadline = Date.now() + 15_000;
  for (;;) {
    const running: { workflowId: string; runId: string }[] = [];
    for await (const w of client.workflow.list({ query: `ExecutionStatus="Running"${narrowQuery}` })) if (belongs(w.taskQueue)) running.push(w);
    if (running.length === 0) return ended;
    if (Date.now() > deadline) throw new Error(`workflows still running after termination: ${running.map((w) => w.workflowId).join(', ')}`);
    for (const w of running) {
      await client.workflow
        .getHandle(w.workflowId, w.runId)
        .terminate(reason)
        .catch(() => undefined);
      if (!ended.workflows.includes(w.workflowId)) ended.workflows.push(w.workflowId);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function withTestClient<T>(use: (client: Client) => Promise<T>): Promise<T> {
  loadProjectEnv();
  const address = process.env.CAPTURE_LEDGER_TEMPORAL_ADDRESS!;
  const connection = await Connection.connect({ address });
  try {
    return await use(new Client({ connection, namespace: process.env.CAPTURE_LEDGER_TEMPORAL_NAMESPACE! }));
  } finally {
    await connection.close();
  }
}

/** The integration global setup: the test namespace exists (stack:up creates it), or a clear error. */
export async function checkTestNamespace(): Promise<void> {
  await withTestClient(async (client) => {
    const namespace = client.options.namespace;
    try {
      await client.workflowService.describeNamespace({ namespace });
    } catch (err) {
      throw new Error(
        `Temporal has no namespace ${namespace} (CAPTURE_LEDGER_TEMPORAL_TEST_NAMESPACE): run \`npm run stack:up\`, which creates it (${(err as Error).message})`,
      );
    }
  });
}

/** The integration global teardown: ends what the run tagged `tag` left in the test namespace. */
export function endRun(tag: string): Promise<{ workflows: string[]; schedules: string[] }> {
  return withTestClient((client) => endWorkflows(client, queueOfRun(tag), `test run ${tag} ended`));
}
