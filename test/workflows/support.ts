// Workflow tests in the samples' style: Temporal's time-skipping test server (built by `npm run
// tools` from Maven Central into .tools/temporal-test-server, never downloaded at test time), a
// real Worker running the real workflow code, and activities replaced by recording mocks.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll } from 'vitest';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../temporal.config.ts';
import type { Activities } from '../../src/activities/index.ts';
import type { AdmitLevelResult } from '../../src/ledger/admit-level.ts';
import type { CrawlProgress } from '../../src/domain/crawl.ts';
import { crawl } from '../../src/workflows/crawl.ts';
import { progressQuery } from '../../src/workflows/messages.ts';
import { quietRuntime, SILENT_LOGGER } from '../support/quiet-runtime.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const WORKFLOWS_PATH = fileURLToPath(new URL('../../src/workflows/index.ts', import.meta.url));
const SERVER_DIR = `${ROOT}.tools/temporal-test-server/`;

/** The executable the SDK starts as `<path> <port>`: java on the jars `npm run tools` fetched. */
function serverWrapper(): string {
  if (!existsSync(`${SERVER_DIR}stamp.json`))
    throw new Error('the time-skipping test server is not built: run `npm run tools` (tools.json "temporal-test-server")');
  const dir = `${ROOT}.stack/test/`;
  mkdirSync(dir, { recursive: true });
  const path = `${dir}temporal-test-server.sh`;
  writeFileSync(path, `#!/bin/sh\nexec java -Xss2m -cp '${SERVER_DIR}classes:${SERVER_DIR}lib/*' capture.ledger.TemporalTestServer "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

/** Starts the test server and waits until it listens (as long as the machine needs, up to 2 minutes). */
async function startServer(): Promise<{ address: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(serverWrapper(), [String(port)], { stdio: 'ignore' });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the time-skipping test server exited (${code}) before listening`))),
  );
  exited.catch(() => undefined);
  for (const until = Date.now() + 120_000; Date.now() < until;) {
    if (await Promise.race([accepts(port), exited])) return { address: `127.0.0.1:${port}`, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`the time-skipping test server did not listen on ${port} within 120 s`);
}

type CreateEnv = (opts: { server: { type: 'existing' }; address: string; namespace: string; supportsTimeSkipping: true }) => Promise<TestWorkflowEnvironment>;

/**
 * The time-skipping environment on a server this process started. createTimeSkipping would start
 * it too, but gives it Core's fixed 5 s to listen, which the JVM misses on a loaded machine (16 s
 * seen with eight builds on two cores); so the server is started here, waited for, and attached to
 * with time skipping, the way createTimeSkipping attaches to the one it starts.
 */
export async function timeSkippingEnv(): Promise<{ env: TestWorkflowEnvironment; stop: () => Promise<void> }> {
  quietRuntime();
  const { address, child } = await startServer();
  const create = (TestWorkflowEnvironment as unknown as { create: CreateEnv }).create.bind(TestWorkflowEnvironment);
  const env = await create({ server: { type: 'existing' }, address, namespace: 'default', supportsTimeSkipping: true });
  // what `npm run stack:up` registers on the dev server; the crawl workflow upserts CrawlState
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      Object.keys(SEARCH_ATTRIBUTES).map((name) => [name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
    ),
  });
  const stop = async (): Promise<void> => {
    await env.teardown();
    child.kill();
  };
  return { env, stop };
}

/** The time-skipping environment for one test file: started before its tests, torn down after them. */
export function useTimeSkippingEnv(): { env: TestWorkflowEnvironment } {
  const t = {} as { env: TestWorkflowEnvironment };
  let stop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    // the bundle too: built here, under the hook's timeout, not inside the first test's
    const [started] = await Promise.all([timeSkippingEnv(), workflowBundle()]);
    ({ env: t.env, stop } = started);
  }, 150_000);
  afterAll(async () => {
    await stop?.();
  });
  return t;
}

/** Bundles the project's workflows once per test file. */
let bundle: Promise<{ code: string }> | undefined;
export function workflowBundle(): Promise<{ code: string }> {
  bundle ??= import('@temporalio/worker').then(({ bundleWorkflowCode }) => bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: SILENT_LOGGER }));
  return bundle;
}

export async function mockWorker(env: TestWorkflowEnvironment, taskQueue: string, activities: Partial<Activities>): Promise<Worker> {
  return Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities });
}

/** An admission result with every count zero unless given. */
export function admitted(over: Partial<AdmitLevelResult> & { crawlId: string; depth: number; reportId: string }): AdmitLevelResult {
  return {
    pages: 0,
    captured: 0,
    failed: 0,
    skipped: 0,
    corrected: 0,
    archivesCreated: 0,
    archives: 0,
    manifestsUnreadable: 0,
    unreported: 0,
    linksRead: 0,
    nextLevelPages: 0,
    cutPages: 0,
    cutSoFar: 0,
    expanded: true,
    ...over,
  } as AdmitLevelResult;
}

/** deliverTuples as a mock: an outbox with nothing in it. */
export const nothingToDeliver: Activities['deliverTuples'] = async () => ({ delivered: 0, failed: 0, remaining: 0, deadLettered: 0, dead: 0 });

/** Starts the crawl workflow of `crawlId` (workflow id crawl-<crawlId>, organization acme) on `taskQueue`. */
export function startCrawlWorkflow(env: TestWorkflowEnvironment, taskQueue: string, crawlId: string, levelTimeoutSeconds: number) {
  return env.client.workflow.start(crawl, { taskQueue, workflowId: `crawl-${crawlId}`, args: [{ crawlId, orgId: 'acme', levelTimeoutSeconds }] });
}

/**
 * Waits in real time, querying the crawl's progress every 10 ms, until `done` holds of it; after
 * `tries` queries it throws what `failure` says of the last progress seen.
 */
export async function untilProgress(
  env: TestWorkflowEnvironment,
  crawlId: string,
  done: (p: CrawlProgress | undefined) => boolean,
  tries: number,
  failure: (p: CrawlProgress | undefined) => string,
): Promise<void> {
  const handle = env.client.workflow.getHandle(`crawl-${crawlId}`);
  for (let i = 0; ; i += 1) {
    const p = await handle.query(progressQuery).catch(() => undefined);
    if (done(p)) return;
    if (i > tries) throw new Error(failure(p));
    await new Promise((r) => setTimeout(r, 10));
  }
}
