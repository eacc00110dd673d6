// `npm run replay`: ReplayWeb.page on 127.0.0.1:CAPTURE_LEDGER_REPLAY_PORT (8899), with
// /wacz/<key>?<signature> proxied to CAPTURE_LEDGER_S3_BUCKET: only presigned reads the API
// handed out get through. The replay server holds no S3 credentials.
import closeWithGrace from 'close-with-grace';
import { loadConfigOrExit } from '../config/env.ts';
import { buildReplayServer } from './server.ts';

const config = loadConfigOrExit('capture-ledger replay');
const app = await buildReplayServer({
  endpoint: config.s3.endpoint,
  bucket: config.s3.bucket,
  publicUrls: [config.api.replayUrl],
  ...(config.replayArchiveDomain !== undefined ? { archiveDomain: config.replayArchiveDomain } : {}),
  logger: { level: 'info' },
});
closeWithGrace({ delay: 5000 }, async () => {
  await app.close();
});
await app.listen({ host: '127.0.0.1', port: config.replayPort });
app.log.info(
  `ReplayWeb.page on http://127.0.0.1:${config.replayPort} — the picker opens each archive with a signed source (bucket ${config.s3.bucket}), node ${process.version}`,
);
