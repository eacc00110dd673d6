// A capture worker in a process of its own, for the capture bench's one- and two-worker runs:
// the real capture worker (Chromium, recorder, packaging) on the bench's capture queue, writing
// to a store that only counts bytes. Prints {"ready":true} once it polls; on SIGTERM it finishes
// the pages in hand, prints {"stored":<bytes>,"pages":<n>,"heap":{...}} and exits: heap is the peak
// of each of node's own measures (process.memoryUsage, MiB), read every 250 ms, and with
// --expose-gc (the bench passes its own node flags on) what the heap holds after a full collection.
//
//   node bench/support-capture-worker.ts <captureQueue> <slots> <name>
import { fileURLToPath } from 'node:url';
import { startCaptureWorker } from '../src/flow/capture-worker/worker.ts';
import type { ArtifactStore } from '../src/flow/store.ts';
import { quietRuntime } from '../test/support/quiet-runtime.ts';
import { benchCaptureConfig } from './support-flow.ts';

export interface NodeMemoryPeaks {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  /** heapUsed after a full collection as the worker stops, when node runs with --expose-gc: what the heap still holds */
  heapUsedAfterGc?: number;
}

/** The peaks of this process's own memory measures (MiB), sampled until stop(). */
function nodeMemoryPeaks(): { stop(): NodeMemoryPeaks } {
  const peaks: NodeMemoryPeaks = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0 };
  const sample = (): void => {
    const m = process.memoryUsage();
    for (const k of ['rss', 'heapTotal', 'heapUsed', 'external'] as const) peaks[k] = Math.max(peaks[k], Math.round(m[k] / 1048576));
  };
  const timer = setInterval(sample, 250);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const gc = (globalThis as { gc?: () => void }).gc;
      if (gc === undefined) return peaks;
      gc();
      return { ...peaks, heapUsedAfterGc: Math.round(process.memoryUsage().heapUsed / 1048576) };
    },
  };
}

async function main(queue: string, slots: number, name: string): Promise<void> {
  quietRuntime();
  let stored = 0;
  let pages = 0;
  const store: ArtifactStore = {
    bucket: 'bench',
    async put(key, body) {
      stored += body.length;
      if (key.endsWith('.result.json')) pages += 1;
      return {};
    },
  };
  const heap = nodeMemoryPeaks();
  const worker = await startCaptureWorker({ config: benchCaptureConfig(queue, store.bucket, slots, name), store });
  console.log(JSON.stringify({ ready: true }));
  process.once('SIGTERM', () => {
    worker.shutdown().then(
      () => {
        console.log(JSON.stringify({ stored, pages, heap: heap.stop() }));
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
