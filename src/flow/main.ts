// npm run flow: the reference capture flow on 127.0.0.1:$CAPTURE_LEDGER_FLOW_PORT, standing in for
// Windmill + BrowserHive. Point CAPTURE_LEDGER_CRAWL_WEBHOOK_URL at http://127.0.0.1:<port>/crawl.
import { loadConfigOrExit } from '../config/env.ts';
import { startFlow } from './server.ts';

async function main(): Promise<void> {
  const config = loadConfigOrExit('capture flow');
  const flow = await startFlow({ config, log: (line) => console.log(`${new Date().toISOString()} ${line}`) });
  const auth = config.identity.mode === 'oidc' ? `JWTs from ${config.identity.issuer}/token` : config.identity.mode === 'dev' ? 'dev identity headers' : 'no credentials (every report will be 401)';
  console.log(`capture flow listening on ${flow.webhookUrl}; writing to s3://${config.s3.bucket}; reporting with ${auth}; node ${process.version}`);
  const stop = (): void => {
    console.log('capture flow: stopping (finishing levels in progress)');
    flow.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(`capture flow: ${(err as Error).stack ?? String(err)}`);
  process.exit(1);
});
