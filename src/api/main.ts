// `npm run api`: reads the configuration once (a bad value stops startup naming the variable),
// builds the dependencies, listens, and shuts down gracefully on SIGINT/SIGTERM: stop accepting,
// finish requests in flight, then close the pools. (Queued tuples are delivered by the worker.)
import { Client as TemporalClient, Connection } from '@temporalio/client';
import closeWithGrace from 'close-with-grace';
import { ConfigError, loadConfig } from '../config/env.ts';
import { createDb } from '../db/connect.ts';
import { createFgaClient } from '../fga/client.ts';
import { createS3 } from '../s3/client.ts';
import { buildApp } from './app.ts';
import type { AppDeps } from './deps.ts';

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`capture-ledger api: ${err.message}`);
    process.exit(1);
  }
  throw err;
}

const deps: AppDeps = { config, db: createDb(config.databaseUrl), fga: createFgaClient(config.fga), s3: createS3(config.s3) };
// Crawls are served only when both webhook settings are present; they need Temporal.
let temporalConnection: Connection | undefined;
if (config.crawl.webhook !== undefined) {
  temporalConnection = await Connection.connect({ address: config.temporal.address });
  deps.temporal = new TemporalClient({ connection: temporalConnection, namespace: config.temporal.namespace });
}
const app = await buildApp(deps, { logger: { level: 'info' } });

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error');
  else app.log.info({ signal }, 'shutting down');
  await app.close();
  await deps.db.destroy();
  deps.s3.destroy();
  await temporalConnection?.close();
});

await app.listen({ host: config.api.host, port: config.api.port });
app.log.info({ identity: config.identity.mode, replay: config.api.replayUrl }, `capture-ledger api on http://${config.api.host}:${config.api.port}`);
