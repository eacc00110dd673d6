// Workflow tests in the samples' style: Temporal's time-skipping test server (built by `npm run
// tools` from Maven Central into .tools/temporal-test-server, never downloaded at test time), a
// real Worker running the real workflow code, and activities replaced by recording mocks.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll } from 'vitest';
import { Runtime, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../temporal.config.ts';
import type { Activities } from '../../src/activities/index.ts';
import type { AdmitLevelResult } from '../../src/ledger/admit-level.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const WORKFLOWS_PATH = fileURLToPath(new URL('../../src/workflows/index.ts', import.meta.url));
const SERVER_DIR = `${ROOT}.tools/temporal-test-server/`;

const SILENT = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
let runtimeInstalled = false;
export function quietRuntime(): void {
  if (runtimeInstalled || process.env.CAPTURE_LEDGER_TEST_LOG) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: SILENT as never, telemetryOptions: { logging: { filter: 'ERROR', forward: {} } } });
  } catch {
    // installed already in this process
  }
}

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

export async function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: serverWrapper() } } });
  // what `npm run stack:up` registers on the dev server; the crawl workflow upserts CrawlState
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      Object.keys(SEARCH_ATTRIBUTES).map((name) => [name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
    ),
  });
  return env;
}

/** The time-skipping environment for one test file: started before its tests, torn down after them. */
export function useTimeSkippingEnv(): { env: TestWorkflowEnvironment } {
  const t = {} as { env: TestWorkflowEnvironment };
  beforeAll(async () => {
    t.env = await timeSkippingEnv();
  }, 60_000);
  afterAll(async () => {
    await t.env?.teardown();
  });
  return t;
}

/** Bundles the project's workflows once per test file. */
let bundle: Promise<{ code: string }> | undefined;
export function workflowBundle(): Promise<{ code: string }> {
  bundle ??= import('@temporalio/worker').then(({ bundleWorkflowCode }) => bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: SILENT }));
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
