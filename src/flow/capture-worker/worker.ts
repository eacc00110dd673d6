// A capture worker: a Temporal worker on the capture task queue running capturePage, with one
// Chromium (sandboxed), the guarded fetcher behind the address policy, a robots.txt cache, a
// WACZ signing key of its own and a write-only S3 identity. Any number may run, on any machine.
import { generateKeyPairSync } from 'node:crypto';
import { hostname } from 'node:os';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createAddressPolicy } from '../../domain/address-policy.ts';
import { createCaptureActivities } from '../activities/capture-page.ts';
import type { CapturePageInput } from '../activities/types.ts';
import { CaptureBrowser } from '../browser/launch.ts';
import type { CaptureWorkerConfig } from '../config.ts';
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
  });
  const own = opts.connection === undefined ? await NativeConnection.connect({ address: config.temporal.address }) : undefined;
  const worker = await Worker.create({
    connection: opts.connection ?? own!,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.captureQueue,
    activities: {
      async capturePage(input: CapturePageInput) {
        busy += 1;
        try {
          return await activities.capturePage(input);
        } finally {
          busy -= 1;
        }
      },
    },
    maxConcurrentActivityTaskExecutions: config.slots,
    shutdownGraceTime: '30 seconds',
  });
  const running = worker.run().finally(async () => {
    await browser.close();
    s3?.destroy();
    await own?.close();
  });
  const stop = async (): Promise<void> => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
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
      await browser.close();
      await stop();
    },
  };
}
