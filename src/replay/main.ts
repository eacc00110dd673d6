// `npm run replay`: ReplayWeb.page on 127.0.0.1:CAPTURE_LEDGER_REPLAY_PORT (8899), with
// /wacz/<key> served from CAPTURE_LEDGER_S3_BUCKET.
import closeWithGrace from 'close-with-grace';
import { loadConfigOrExit } from '../config/env.ts';
import { createS3 } from '../s3/client.ts';
import { buildReplayServer } from './server.ts';

const config = loadConfigOrExit('capture-ledger replay');
const s3 = createS3(config.s3);
const app = await buildReplayServer({ s3, bucket: config.s3.bucket, logger: { level: 'info' } });
closeWithGrace({ delay: 5000 }, async () => {
  await app.close();
  s3.destroy();
});
await app.listen({ host: '127.0.0.1', port: config.replayPort });
app.log.info(`ReplayWeb.page on http://127.0.0.1:${config.replayPort} — open /?source=/wacz/<objectKey> (bucket ${config.s3.bucket}), node ${process.version}`);
