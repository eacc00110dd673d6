// `npm run api`: reads the configuration once (a bad value stops startup naming the variable),
// builds the app, listens, and shuts down gracefully on SIGINT/SIGTERM: stop accepting, finish
// requests in flight, then close the clients. (Queued tuples are delivered by the worker.)
import closeWithGrace from 'close-with-grace';
import { loadConfigOrExit } from '../config/env.ts';
import { createFgaClient } from '../fga/client.ts';
import { buildApp } from './app.ts';

const config = loadConfigOrExit('capture-ledger api');

// The pool, the Temporal connection (only when crawls are configured, both webhook settings set),
// and the object-store and search clients are the app's own: it opens them, and app.close() closes them.
const app = await buildApp({ config, fga: createFgaClient(config.fga) }, { logger: { level: 'info' }, connectTemporal: true });

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error');
  else app.log.info({ signal }, 'shutting down');
  await app.close();
});

await app.listen({ host: config.api.host, port: config.api.port });
app.log.info(
  { identity: config.identity.mode, replay: config.api.replayUrl, node: process.version },
  `capture-ledger api on http://${config.api.host}:${config.api.port}`,
);
