// `npm run api`: reads the configuration once (a bad value stops startup naming the variable),
// builds the dependencies, listens, and shuts down gracefully on SIGINT/SIGTERM: stop accepting,
// finish requests in flight, then close the pools. (Queued tuples are delivered by the worker.)
import closeWithGrace from 'close-with-grace';
import { loadConfigOrExit } from '../config/env.ts';
import { createDb } from '../db/connect.ts';
import { createFgaClient } from '../fga/client.ts';
import { createTemporalClient } from '../temporal/client.ts';
import { buildApp } from './app.ts';
import type { AppInput } from './deps.ts';

const config = loadConfigOrExit('capture-ledger api');

// the object-store and search clients are the app's own: it makes them, and closes them on app.close()
const deps: AppInput = { config, db: createDb(config.databaseUrl), fga: createFgaClient(config.fga) };
// Crawls are served only when both webhook settings are present; they need Temporal.
// The connection is lazy: the API starts while Temporal is down, and a crawl started then is a 503.
const temporal = config.crawl.webhook === undefined ? undefined : await createTemporalClient(config.temporal);
deps.temporal = temporal?.client;
const app = await buildApp(deps, { logger: { level: 'info' } });

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error');
  else app.log.info({ signal }, 'shutting down');
  await app.close();
  await deps.db.destroy();
  await temporal?.close();
});

await app.listen({ host: config.api.host, port: config.api.port });
app.log.info(
  { identity: config.identity.mode, replay: config.api.replayUrl, node: process.version },
  `capture-ledger api on http://${config.api.host}:${config.api.port}`,
);
