// A real Temporal worker in the test process, on a task queue of its own, with the project's
// activities wired to the test's database, OpenFGA store and S3. Workflows come from the bundle
// the integration global setup made once (inject('workflowBundlePath')).
//
//   const tw = await startTestWorker({ config, db, fga });      // config from testApiConfig(...)
//   ... tw.client.workflow.start(...) / startTestApi({ ..., deps: { temporal: tw.client } })
//   await tw.stop();   // or tw.restart() to kill and replace the worker mid-crawl
//
// Tests run in their own namespace (test/support/env.ts). Every task queue a test makes carries
// this run's tag, and what a test starts is ended: stop() terminates the workflows still running on
// its queue, and the integration global teardown ends whatever else the run left
// (test/support/temporal-run.ts).
import { randomBytes } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import type { OpenFgaClient } from '@openfga/sdk';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import type { Config } from '../../src/config/env.ts';
import type { Db } from '../../src/db/connect.ts';
import { createS3 } from '../../src/s3/client.ts';
import { createSearchIndex } from '../../src/search/client.ts';
import { createObjectReader, type ObjectReader } from '../../src/s3/object-reader.ts';
import { createWorker } from '../../src/worker/create.ts';
import { startOutboxWake, type OutboxWake } from '../../src/worker/outbox-wake.ts';
import { loadProjectEnv } from './env.ts';
import { quietRuntime } from './quiet-runtime.ts';
import { endWorkflows } from './temporal-run.ts';

/** This run's tag, provided by the integration global setup (runs side by side have their own). */
function runTag(): string {
  return inject('testRunTag') ?? 'untagged';
}

export function uniqueTaskQueue(prefix = 'test'): string {
  return `${prefix}-${runTag()}-${randomBytes(4).toString('hex')}`;
}

export interface TestWorker {
  taskQueue: string;
  client: Client;
  /** the running worker (replaced by restart) */
  worker: Worker;
  /** shut the worker down (as a killed process would stop polling) and start a fresh one */
  restart(): Promise<void>;
  /** shut the worker down, keep the client */
  shutdown(): Promise<void>;
  /** start a worker again after shutdown */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** stops (false) or starts again (true) the outbox wake beside the worker */
  setOutboxWake(on: boolean): Promise<void>;
}

export interface TestWorkerOptions {
  /** must carry the task queue the workflows are started on (config.temporal.taskQueue) */
  config: Config;
  db: Db;
  fga: OpenFgaClient;
  s3?: S3Client;
  /** run the worker process's outbox wake beside it (default true); false keeps queued rows queued for the test to look at */
  outboxWake?: boolean;
}

export async function startTestWorker(opts: TestWorkerOptions): Promise<TestWorker> {
  loadProjectEnv();
  quietRuntime();
  const { config } = opts;
  const s3 = opts.s3 ?? createS3(config.s3);
  const search = config.opensearch === undefined ? undefined : createSearchIndex(config.opensearch);
  const workflowBundlePath = inject('workflowBundlePath');
  const native = await NativeConnection.connect({ address: config.temporal.address });
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });

  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let reader: ObjectReader | undefined;
  let wake: OutboxWake | undefined;
  let wakeOn = opts.outboxWake !== false;
  const start = async (): Promise<void> => {
    if (wakeOn) wake = startOutboxWake({ databaseUrl: config.databaseUrl, db: opts.db, fga: opts.fga });
    reader = createObjectReader(config.s3);
    worker = await createWorker({
      connection: native,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      deps: { config, db: opts.db, fga: opts.fga, s3, search, reader },
      workflowBundlePath,
      shutdownGraceTime: '1 second',
    });
    running = worker.run();
  };
  const shutdown = async (): Promise<void> => {
    await wake?.stop();
    wake = undefined;
    if (worker === undefined) return;
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running?.catch(() => undefined);
    reader?.close();
    worker = undefined;
    running = undefined;
    reader = undefined;
  };
  await start();

  const handle: TestWorker = {
    taskQueue: config.temporal.taskQueue,
    client,
    get worker() {
      return worker!;
    },
    async restart() {
      await shutdown();
      await start();
    },
    shutdown,
    start,
    async setOutboxWake(on) {
      wakeOn = on;
      await wake?.stop();
      wake = on && worker !== undefined ? startOutboxWake({ databaseUrl: config.databaseUrl, db: opts.db, fga: opts.fga }) : undefined;
    },
    async stop() {
      // what the test left running on this queue would otherwise wait forever for a worker
      const queue = config.temporal.taskQueue;
      await endWorkflows(client, (q) => q === queue, 'test worker stopped', ` AND TaskQueue="${queue}"`);
      await shutdown();
      await connection.close();
      await native.close();
      if (opts.s3 === undefined) s3.destroy();
      await search?.client.close();
    },
  };
  return handle;
}
