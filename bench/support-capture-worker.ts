// A capture worker in a process of its own, for the capture bench's one- and two-worker runs:
// the real capture worker (Chromium, recorder, packaging) on the bench's capture queue, writing
// to a store that only counts bytes. Prints {"ready":true} once it polls; on SIGTERM it finishes
// the pages in hand, prints {"stored":<bytes>,"pages":<n>} and exits.
//
//   node bench/support-capture-worker.ts <captureQueue> <slots> <name>
import { fileURLToPath } from 'node:url';
import { Runtime } from '@temporalio/worker';
import { startCaptureWorker } from '../src/flow/capture-worker/worker.ts';
import type { ArtifactStore } from '../src/flow/store.ts';
import { benchCaptureConfig } from './support-flow.ts';

async function main(queue: string, slots: number, name: string): Promise<void> {
  Runtime.install({ logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never });
  let stored = 0;
  let pages = 0;
  const store: ArtifactStore = {
    bucket: 'bench',
    async put(key, body) {
      stored += body.length;
      if (key.endsWith('.result.json')) pages += 1;
    },
  };
  const worker = await startCaptureWorker({ config: benchCaptureConfig(queue, store.bucket, slots, name), store });
  console.log(JSON.stringify({ ready: true }));
  process.once('SIGTERM', () => {
    worker.shutdown().then(
      () => {
        console.log(JSON.stringify({ stored, pages }));
        process.exit(0);
      },
      () => process.exit(1),
    );
  });
  await worker.running;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [queue, slots, name] = process.argv.slice(2);
  main(queue!, Number(slots), name!).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
