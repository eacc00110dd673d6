// npm run capture-worker: one capture worker, polling the capture task queue. Any number may run,
// on any machine; each needs only its own settings (CAPTURE_WORKER_*), checked before it starts.
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { loadCaptureWorkerConfig, orExit } from '../config.ts';
import { defaultWorkerName, startCaptureWorker } from './worker.ts';

const OWN = /^CAPTURE_WORKER_/;

/** The worker's own variables only: CAPTURE_WORKER_* from the project's env files when this user
 * may read them (a developer's `npm run capture-worker`), then from the environment. */
function workerEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const file of ['.env.example', '.env', '.env.local']) {
    let text: string;
    try {
      text = readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');
    } catch {
      continue;
    }
    for (const [k, v] of Object.entries(parseEnv(text))) if (OWN.test(k)) env[k] = v;
  }
  for (const [k, v] of Object.entries(process.env)) if (OWN.test(k)) env[k] = v;
  return env;
}

async function main(): Promise<void> {
  const config = orExit('capture worker', () => loadCaptureWorkerConfig(workerEnv(), defaultWorkerName()));
  const worker = await startCaptureWorker({ config, log: (line) => console.log(`${new Date().toISOString()} ${line}`) });
  const { temporal } = config;
  console.log(
    `capture worker ${config.name} (pid ${process.pid}, uid ${process.getuid?.() ?? '?'}) polling ${temporal.address} namespace ${temporal.namespace} queue ${temporal.captureQueue} with ${config.slots} slot(s); writing to s3://${config.s3.bucket} as ${config.s3.accessKeyId}; node ${process.version}`,
  );
  const stop = (): void => {
    console.log(`capture worker ${config.name}: stopping (finishing the pages in hand)`);
    worker.shutdown().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await worker.running;
}

main().catch((err: unknown) => {
  console.error(`capture worker: ${(err as Error).stack ?? String(err)}`);
  process.exit(1);
});
