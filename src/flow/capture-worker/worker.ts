// A capture worker: a Temporal worker on the capture task queue running capturePage, with one
// Chromium (sandboxed), the guarded fetcher behind the address policy, a robots.txt cache, a
// WACZ signing key of its own and a write-only S3 identity. Any number may run, on any machine.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { NativeConnection, Worker, type ActivitySlotInfo, type SlotSupplier } from '@temporalio/worker';
import { createAddressPolicy } from '../../domain/address-policy.ts';
import { createCaptureActivities } from '../activities/capture-page.ts';
import type { CapturePageInput } from '../activities/types.ts';
import { CaptureBrowser } from '../browser/launch.ts';
import type { CaptureWorkerConfig } from '../config.ts';
import { CaptureLanes } from './lanes.ts';
import { createGuardedFetcher, type Resolver } from '../fetch.ts';
import { HostLog } from '../level.ts';
import { RobotsCache, fetchRobotsTxt } from '../robots-cache.ts';
import { createCaptureS3 } from '../s3.ts';
import { s3Store, type ArtifactStore } from '../store.ts';
import { CAPTURE_SOFTWARE, CAPTURE_USER_AGENT } from '../version.ts';

export interface CaptureWorkerOptions {
  config: CaptureWorkerConfig;
  /** default: a connection of its own to config.temporal.address */
  connection?: NativeConnection;
  /** default: S3 from config.s3 */
  store?: ArtifactStore;
  /** how host names are resolved before the address policy checks them (tests stage rebinding) */
  resolve?: Resolver;
  robotsTtlMs?: number;
  log?: (line: string) => void;
}

export interface CaptureWorker {
  name: string;
  hostLog: HostLog;
  /** pages this worker is capturing now */
  busy(): number;
  /** settles when the worker has stopped */
  running: Promise<void>;
  /** finishes the pages in hand, then stops */
  shutdown(): Promise<void>;
  /** dies as a killed process would (tests): nothing more is visited, written or answered */
  kill(): Promise<void>;
}

export const defaultWorkerName = (): string => `${hostname()}:${process.pid}`;

export async function startCaptureWorker(opts: CaptureWorkerOptions): Promise<CaptureWorker> {
  const { config } = opts;
  const log = opts.log ?? (() => {});
  const policy = createAddressPolicy(config.capture.allow, config.capture.deniedPorts);
  const fetcher = createGuardedFetcher(policy, opts.resolve ? { resolve: opts.resolve } : {});
  const robots = new RobotsCache((url) => fetchRobotsTxt(fetcher, url, CAPTURE_USER_AGENT), opts.robotsTtlMs ?? 5 * 60_000);
  const s3 = opts.store === undefined ? createCaptureS3(config.s3) : undefined;
  const store = opts.store ?? s3Store(s3!, config.s3.bucket);
  const browser = new CaptureBrowser(log);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const hostLog = new HostLog();
  let stopped = false;
  let busy = 0;
  // this process's own queue: a slice hands over here the capture to follow one of this worker's
  // (a new name each start, so nothing meant for a dead process waits for a new one)
  const lanes = { queue: `${config.temporal.captureQueue}@${config.name}#${randomBytes(4).toString('hex')}`, gates: new CaptureLanes(config.slots) };
  const activities = createCaptureActivities({
    browser,
    fetcher,
    robots,
    store,
    userAgent: CAPTURE_USER_AGENT,
    software: `${CAPTURE_SOFTWARE} (${config.name})`,
    signer: { privateKey, publicKey },
    hostLog,
    log,
    stopped: () => stopped,
    lanes,
  });
  const own = opts.connection === undefined ? await NativeConnection.connect({ address: config.temporal.address }) : undefined;
  const capturePage = async (input: CapturePageInput) => {
    busy += 1;
    try {
      return await activities.capturePage(input);
    } finally {
      busy -= 1;
    }
  };
  // the shared queue is polled while the slots have room (lanes.ts); captures handed over behind
  // this worker's mostly wait for the one ahead, each capture in hand having at most one behind it
  const queues = await serveQueues(opts.connection ?? own!, config.temporal.namespace, { capturePage }, [
    [config.temporal.captureQueue, lanes.gates.sharedQueueSlots()],
    [lanes.queue, { type: 'fixed-size', numSlots: 4 * config.slots }],
  ]);
  const running = Promise.allSettled(queues.runs).then(async (settled) => {
    await browser.close();
    s3?.destroy();
    await own?.close();
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  });
  const stop = async (): Promise<void> => {
    queues.shutdown();
    await running.catch(() => undefined);
  };
  return {
    name: config.name,
    hostLog,
    busy: () => busy,
    running,
    shutdown: stop,
    async kill() {
      stopped = true;
      // a killed process takes no more tasks: polling stops before the browser is closed (which
      // can take a busy machine a second), or the dying worker took the retries of the pages it
      // failed and failed them again, using up their attempts (cold CI, once)
      queues.shutdown();
      await browser.close();
      await stop();
    },
  };
}

/** One Temporal worker per queue, each with its activity slots. One stopping stops the others:
 * the process serves all its queues or none. */
async function serveQueues(
  connection: NativeConnection,
  namespace: string,
  activities: Record<string, (input: CapturePageInput) => Promise<unknown>>,
  queues: [string, SlotSupplier<ActivitySlotInfo>][],
): Promise<{ runs: Promise<void>[]; shutdown: () => void }> {
  const fixed = (numSlots: number) => ({ type: 'fixed-size' as const, numSlots });
  const workers: Worker[] = [];
  for (const [taskQueue, activityTaskSlotSupplier] of queues)
    workers.push(
      await Worker.create({
        connection,
        namespace,
        taskQueue,
        activities,
        tuner: { activityTaskSlotSupplier, workflowTaskSlotSupplier: fixed(1), localActivityTaskSlotSupplier: fixed(1), nexusTaskSlotSupplier: fixed(1) },
        shutdownGraceTime: '30 seconds',
      }),
    );
  const shutdown = (): void => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  };
  return { runs: workers.map((w) => w.run().finally(shutdown)), shutdown };
}
