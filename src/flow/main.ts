// npm run flow: the reference capture flow's receiver and flow worker on
// 127.0.0.1:$CAPTURE_LEDGER_FLOW_PORT, standing in for Windmill + BrowserHive. Point
// CAPTURE_LEDGER_CRAWL_WEBHOOK_URL at http://127.0.0.1:<port>/crawl. Pages are captured by capture
// workers (npm run capture-worker), as many as there are, on any machine.
import { loadFlowConfig, orExit } from './config.ts';
import { startFlow } from './server.ts';

async function main(): Promise<void> {
  const config = orExit('capture flow', () => loadFlowConfig(process.env));
  const flow = await startFlow({ config, log: (line) => console.log(`${new Date().toISOString()} ${line}`) });
  const auth =
    config.identity.mode === 'oidc'
      ? `JWTs from ${config.identity.issuer}/token`
      : config.identity.mode === 'dev'
        ? 'dev identity headers'
        : 'no credentials (every report will be 401)';
  const { temporal } = config;
  console.log(
    `capture flow listening on ${flow.webhookUrl}; level workflows on ${temporal.address} namespace ${temporal.namespace} queue ${temporal.flowQueue}; pages on queue ${temporal.captureQueue}; reporting with ${auth}; node ${process.version}`,
  );
  const stop = (): void => {
    console.log('capture flow: stopping (the levels go on in Temporal)');
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
