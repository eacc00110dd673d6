// `npm run worker`: the Temporal worker on config.temporal.taskQueue. Creates the schedules it
// owns (outbox-drain every minute, reconcile daily, search-index every 10 minutes when search is
// configured) idempotently, then runs until SIGINT/SIGTERM. Beside the worker, the outbox wake
// (outbox-wake.ts): one drain that every committed outbox write wakes.
import { NativeConnection } from '@temporalio/worker';
import { loadConfigOrExit } from '../config/env.ts';
import { createDb } from '../db/connect.ts';
import { createFgaClient } from '../fga/client.ts';
import { createS3 } from '../s3/client.ts';
import { createObjectReader } from '../s3/object-reader.ts';
import { createSearchIndex } from '../search/client.ts';
import { createTemporalClient } from '../temporal/client.ts';
import { ensureSchedules, outboxDrainSchedule, reconcileSchedule, searchIndexSchedule } from '../temporal/schedules.ts';
import { createWorker } from './create.ts';
import { startOutboxWake } from './outbox-wake.ts';

const config = loadConfigOrExit('capture-ledger worker');
const db = createDb(config.databaseUrl);
const deps = {
  config,
  db,
  s3: createS3(config.s3),
  reader: createObjectReader(config.s3),
  fga: createFgaClient(config.fga),
  search: config.opensearch === undefined ? undefined : createSearchIndex(config.opensearch),
};

const connection = await NativeConnection.connect({ address: config.temporal.address });
const temporal = await createTemporalClient(config.temporal, { lazy: false });
try {
  const queue = config.temporal.taskQueue;
  const wanted = [outboxDrainSchedule(queue), reconcileSchedule(queue)];
  if (config.opensearch) wanted.push(searchIndexSchedule(queue));
  const schedules = await ensureSchedules(temporal.client, wanted);
  for (const s of schedules) console.log(`schedule ${s.id}: ${s.action}`);
} finally {
  await temporal.close();
}

const worker = await createWorker({ connection, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue, deps });
console.log(
  `worker on task queue ${config.temporal.taskQueue} at ${config.temporal.address} (namespace ${config.temporal.namespace}), node ${process.version}`,
);
const wake = startOutboxWake({
  databaseUrl: config.databaseUrl,
  db,
  fga: deps.fga,
  log: { info: (msg, meta) => console.log(msg, JSON.stringify(meta)), warn: (msg, meta) => console.warn(msg, JSON.stringify(meta)) },
});
try {
  // The worker shuts down gracefully on SIGINT/SIGTERM by itself.
  await worker.run();
} finally {
  await wake.stop();
  await connection.close();
  await db.destroy();
  deps.s3.destroy();
  deps.reader.close();
  await deps.search?.client.close();
}
