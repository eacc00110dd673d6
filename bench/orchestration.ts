// Benchmark: how long a level report takes to reach admission (issue 5): from the report
// route's 202 to the admitLevel activity starting, over the real API, Temporal dev server and an
// in-process worker. Goal: p50 under 100 ms.
//
//   node bench/orchestration.ts        (or through npm run bench)
//   → {"bench":"orchestration","runs":20,"p50Ms":…,"p95Ms":…,"goalP50Ms":100,"met":true,…}
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { OpenFgaClient } from '@openfga/sdk';
import { transformer } from '@openfga/syntax-transformer';
import { readFileSync } from 'node:fs';
import { createActivities } from '../src/activities/index.ts';
import type { CrawlProgress } from '../src/domain/crawl.ts';
import { CAPABILITY_HEADER, type DispatchBody } from '../src/domain/contract.ts';
import { buildApp } from '../src/api/app.ts';
import { createAppClients, type AppClients } from '../src/api/deps.ts';
import type { Config } from '../src/config/env.ts';
import { WORKFLOWS_PATH } from '../src/worker/create.ts';
import { createObjectReader } from '../src/s3/object-reader.ts';
import { progressQuery } from '../src/workflows/messages.ts';
import { quietRuntime } from '../test/support/quiet-runtime.ts';
import { benchConfig, createBenchDatabase, percentile, printLines, type BenchDatabase } from './support-crawl.ts';
import { load1Now, round } from './support-figures.ts';

export interface OrchestrationBenchOptions {
  runs?: number;
}

/** The dev identity every request of this bench is made as: user:bench, a submitter of organization:bench. */
const HEADERS = { 'x-capture-ledger-subject': 'bench', 'x-capture-ledger-organizations': 'bench', 'content-type': 'application/json' };

interface DispatchHook {
  url: string;
  /** each dispatch's capability, by `${crawlId}/${depth}` */
  capabilities: Map<string, string>;
  close(): void;
}

async function startDispatchHook(): Promise<DispatchHook> {
  // a webhook that accepts every dispatch and keeps only its capability, which the report carries
  const capabilities = new Map<string, string>();
  const hook = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const d = JSON.parse(Buffer.concat(chunks).toString('utf8')) as DispatchBody;
      if (d.capability !== undefined) capabilities.set(`${d.crawlId}/${d.depth}`, d.capability);
      res.writeHead(202).end('{}');
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/crawl`;
  return { url, capabilities, close: () => void hook.close() };
}

interface FgaStore {
  /** the client that created the store, to delete it */
  admin: OpenFgaClient;
  storeId: string;
  modelId: string;
}

/** A new OpenFGA store with the project's model (fga/model.fga). */
async function createFgaStore(apiUrl: string): Promise<FgaStore> {
  const admin = new OpenFgaClient({ apiUrl });
  const store = await admin.createStore({ name: `bench-orchestration-${Date.now()}` });
  const model = await new OpenFgaClient({ apiUrl, storeId: store.id }).writeAuthorizationModel(
    transformer.transformDSLToJSONObject(readFileSync(new URL('../fga/model.fga', import.meta.url), 'utf8')) as never,
  );
  return { admin, storeId: store.id, modelId: model.authorization_model_id };
}

/** The project's configuration over this bench's database, store, webhook and task queue, with the dev identity and no search. */
function orchestrationConfig(databaseUrl: string, store: FgaStore, hookUrl: string, taskQueue: string): Config {
  return benchConfig({
    CAPTURE_LEDGER_DATABASE_URL: databaseUrl,
    CAPTURE_LEDGER_FGA_STORE_ID: store.storeId,
    CAPTURE_LEDGER_FGA_MODEL_ID: store.modelId,
    CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: hookUrl,
    CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: 'bench',
    CAPTURE_LEDGER_TEMPORAL_TASK_QUEUE: taskQueue,
    CAPTURE_LEDGER_OIDC_ISSUER: '',
    CAPTURE_LEDGER_DEV_IDENTITY: '1',
    CAPTURE_LEDGER_OPENSEARCH_URL: '',
  });
}

interface BenchApi {
  config: Config;
  bench: BenchDatabase;
  fga: OpenFgaClient;
  s3: AppClients['s3'];
  /** Temporal's client, the API's too */
  client: Client;
  apiUrl: string;
  close(): Promise<void>;
}

/** The API in this process over a database and store of its own, dispatching to `hookUrl`. */
async function startApi(hookUrl: string): Promise<BenchApi> {
  const base = benchConfig();
  const store = await createFgaStore(base.fga.apiUrl);
  const bench = await createBenchDatabase(base.databaseUrl);
  const config = orchestrationConfig(bench.url, store, hookUrl, `bench-orchestration-${Date.now()}`);
  const fga = new OpenFgaClient({ apiUrl: config.fga.apiUrl, storeId: store.storeId, authorizationModelId: store.modelId });
  await fga.write({ writes: [{ user: 'user:bench', relation: 'submitter', object: 'organization:bench' }] });
  const clients = createAppClients(config);
  const s3 = clients.s3;
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const app = await buildApp({ config, db: bench.db, fga, ...clients, temporal: client }, { logger: false });
  const apiUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    config,
    bench,
    fga,
    s3,
    client,
    apiUrl,
    async close() {
      await app.close();
      await connection.close();
      s3.destroy();
      await bench.drop();
      await store.admin.deleteStore({ storeId: store.storeId } as never).catch(() => undefined);
    },
  };
}

interface AdmissionWorker {
  /** when admitLevel started, by report id (ms since the epoch) */
  admitStarted: Map<string, number>;
  stop(): Promise<void>;
}

/** A worker in this process on the API's task queue. */
async function startWorker(api: BenchApi): Promise<AdmissionWorker> {
  const { config } = api;
  // the project's activities, with admitLevel's start time recorded
  const admitStarted = new Map<string, number>();
  const reader = createObjectReader(config.s3);
  const activities = createActivities({
    config: { ...config, api: { ...config.api, publicUrl: api.apiUrl } },
    db: api.bench.db,
    s3: api.s3,
    fga: api.fga,
    reader,
  });
  const admitLevel: typeof activities.admitLevel = async (input) => {
    admitStarted.set(input.reportId, performance.timeOrigin + performance.now());
    return activities.admitLevel(input);
  };
  const native = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await Worker.create({
    connection: native,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    workflowsPath: WORKFLOWS_PATH,
    activities: { ...activities, admitLevel },
  });
  const running = worker.run();
  return {
    admitStarted,
    async stop() {
      worker.shutdown();
      await running.catch(() => undefined);
      reader.close();
      await native.close();
    },
  };
}

/** POST /api/crawls of one seed, no deeper; the crawl's id. */
async function submitCrawl(apiUrl: string, i: number): Promise<string> {
  const res = await fetch(`${apiUrl}/api/crawls`, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ seeds: [`https://bench.test/${i}`], maxDepth: 0 }),
  });
  if (res.status !== 202) throw new Error(`POST /api/crawls answered ${res.status}: ${await res.text()}`);
  const { crawlId } = (await res.json()) as { crawlId: string };
  return crawlId;
}

interface ReportTimes {
  /** the level report sent, answered 202, and admitLevel started for it (ms since the epoch) */
  sent: number;
  accepted: number;
  started: number;
}

/** One crawl, its level 0 reported, through to its end. */
async function timeReport(api: BenchApi, hook: DispatchHook, admitStarted: Map<string, number>, i: number): Promise<ReportTimes> {
  const { apiUrl, client } = api;
  const crawlId = await submitCrawl(apiUrl, i);
  // report once the workflow is waiting for it, as a real level (seconds long) would find it
  await waitForPhase(client, crawlId, 'waiting');
  const sent = performance.timeOrigin + performance.now();
  const rep = await fetch(`${apiUrl}/api/crawls/${crawlId}/levels/0`, {
    method: 'POST',
    headers: { ...HEADERS, [CAPABILITY_HEADER]: hook.capabilities.get(`${crawlId}/0`) ?? '' },
    body: JSON.stringify({ depth: 0, pages: [{ url: `https://bench.test/${i}`, status: 'failed' }] }),
  });
  const accepted = performance.timeOrigin + performance.now();
  if (rep.status !== 202) throw new Error(`report answered ${rep.status}: ${await rep.text()}`);
  const { reportId } = (await rep.json()) as { reportId: string };
  await client.workflow.getHandle(`crawl-${crawlId}`).result();
  const started = admitStarted.get(reportId);
  if (started === undefined) throw new Error(`admitLevel never started for report ${reportId}`);
  return { sent, accepted, started };
}

/** The bench's record: from the report's 202 (and from its sending) to admitLevel starting, against the goal. */
function summary(runs: number, from202: number[], fromSend: number[], load1: number): Record<string, unknown> {
  const p50 = percentile(from202, 50);
  return {
    bench: 'orchestration',
    runs,
    p50Ms: round(p50),
    p95Ms: round(percentile(from202, 95)),
    maxMs: round(Math.max(...from202)),
    fromRequestSentP50Ms: round(percentile(fromSend, 50)),
    goalP50Ms: 100,
    met: p50 < 100,
    load1,
  };
}

export async function run(opts: OrchestrationBenchOptions = {}): Promise<Record<string, unknown>[]> {
  const runs = opts.runs ?? 20;
  const load1 = load1Now();
  quietRuntime();
  const from202: number[] = [];
  const fromSend: number[] = [];
  // what has started is stopped again, last first, also when a later part fails to start
  const stops: (() => unknown)[] = [];
  try {
    const hook = await startDispatchHook();
    stops.push(() => hook.close());
    const api = await startApi(hook.url);
    stops.push(() => api.close());
    const worker = await startWorker(api);
    stops.push(() => worker.stop());
    for (let i = 0; i < runs + 2; i += 1) {
      const t = await timeReport(api, hook, worker.admitStarted, i);
      if (i >= 2) {
        // the first two warm up the worker's caches
        from202.push(t.started - t.accepted);
        fromSend.push(t.started - t.sent);
      }
    }
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
  return [summary(runs, from202, fromSend, load1)];
}

async function waitForPhase(client: Client, crawlId: string, phase: CrawlProgress['phase']): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    const p = await client.workflow
      .getHandle(`crawl-${crawlId}`)
      .query(progressQuery)
      .catch(() => undefined);
    if (p?.phase === phase) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`crawl ${crawlId} never reached phase ${phase}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printLines(await run());
