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
import { createAppClients } from '../src/api/deps.ts';
import { WORKFLOWS_PATH } from '../src/worker/create.ts';
import { progressQuery } from '../src/workflows/messages.ts';
import { quietRuntime } from '../test/support/quiet-runtime.ts';
import { benchConfig, createBenchDatabase, percentile, printLines } from './support-crawl.ts';
import { load1Now, round } from './support-figures.ts';

export interface OrchestrationBenchOptions {
  runs?: number;
}

export async function run(opts: OrchestrationBenchOptions = {}): Promise<Record<string, unknown>[]> {
  const runs = opts.runs ?? 20;
  const load1 = load1Now();
  quietRuntime();
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
  const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/crawl`;

  const base = benchConfig();
  const fgaAdmin = new OpenFgaClient({ apiUrl: base.fga.apiUrl });
  const fgaStore = await fgaAdmin.createStore({ name: `bench-orchestration-${Date.now()}` });
  const model = await new OpenFgaClient({ apiUrl: base.fga.apiUrl, storeId: fgaStore.id }).writeAuthorizationModel(
    transformer.transformDSLToJSONObject(readFileSync(new URL('../fga/model.fga', import.meta.url), 'utf8')) as never,
  );
  const bench = await createBenchDatabase(base.databaseUrl);
  const taskQueue = `bench-orchestration-${Date.now()}`;
  const config = benchConfig({
    CAPTURE_LEDGER_DATABASE_URL: bench.url,
    CAPTURE_LEDGER_FGA_STORE_ID: fgaStore.id,
    CAPTURE_LEDGER_FGA_MODEL_ID: model.authorization_model_id,
    CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: hookUrl,
    CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: 'bench',
    CAPTURE_LEDGER_TEMPORAL_TASK_QUEUE: taskQueue,
    CAPTURE_LEDGER_OIDC_ISSUER: '',
    CAPTURE_LEDGER_DEV_IDENTITY: '1',
    CAPTURE_LEDGER_OPENSEARCH_URL: '',
  });
  const fga = new OpenFgaClient({ apiUrl: config.fga.apiUrl, storeId: fgaStore.id, authorizationModelId: model.authorization_model_id });
  await fga.write({ writes: [{ user: 'user:bench', relation: 'submitter', object: 'organization:bench' }] });
  const clients = createAppClients(config);
  const s3 = clients.s3;
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const app = await buildApp({ config, db: bench.db, fga, ...clients, temporal: client }, { logger: false });
  const apiUrl = await app.listen({ host: '127.0.0.1', port: 0 });

  // the project's activities, with admitLevel's start time recorded
  const admitStarted = new Map<string, number>();
  const activities = createActivities({ config: { ...config, api: { ...config.api, publicUrl: apiUrl } }, db: bench.db, s3, fga });
  const admitLevel: typeof activities.admitLevel = async (input) => {
    admitStarted.set(input.reportId, performance.timeOrigin + performance.now());
    return activities.admitLevel(input);
  };
  const native = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await Worker.create({
    connection: native,
    namespace: config.temporal.namespace,
    taskQueue,
    workflowsPath: WORKFLOWS_PATH,
    activities: { ...activities, admitLevel },
  });
  const running = worker.run();

  const headers = { 'x-capture-ledger-subject': 'bench', 'x-capture-ledger-organizations': 'bench', 'content-type': 'application/json' };
  const from202: number[] = [];
  const fromSend: number[] = [];
  try {
    for (let i = 0; i < runs + 2; i += 1) {
      const res = await fetch(`${apiUrl}/api/crawls`, { method: 'POST', headers, body: JSON.stringify({ seeds: [`https://bench.test/${i}`], maxDepth: 0 }) });
      if (res.status !== 202) throw new Error(`POST /api/crawls answered ${res.status}: ${await res.text()}`);
      const { crawlId } = (await res.json()) as { crawlId: string };
      // report once the workflow is waiting for it, as a real level (seconds long) would find it
      await waitForPhase(client, crawlId, 'waiting');
      const sent = performance.timeOrigin + performance.now();
      const rep = await fetch(`${apiUrl}/api/crawls/${crawlId}/levels/0`, {
        method: 'POST',
        headers: { ...headers, [CAPABILITY_HEADER]: capabilities.get(`${crawlId}/0`) ?? '' },
        body: JSON.stringify({ depth: 0, pages: [{ url: `https://bench.test/${i}`, status: 'failed' }] }),
      });
      const accepted = performance.timeOrigin + performance.now();
      if (rep.status !== 202) throw new Error(`report answered ${rep.status}: ${await rep.text()}`);
      const { reportId } = (await rep.json()) as { reportId: string };
      await client.workflow.getHandle(`crawl-${crawlId}`).result();
      const started = admitStarted.get(reportId);
      if (started === undefined) throw new Error(`admitLevel never started for report ${reportId}`);
      if (i >= 2) {
        // the first two warm up the worker's caches
        from202.push(started - accepted);
        fromSend.push(started - sent);
      }
    }
  } finally {
    worker.shutdown();
    await running.catch(() => undefined);
    await native.close();
    await app.close();
    await connection.close();
    s3.destroy();
    await bench.drop();
    await fgaAdmin.deleteStore({ storeId: fgaStore.id } as never).catch(() => undefined);
    hook.close();
  }
  const p50 = percentile(from202, 50);
  return [
    {
      bench: 'orchestration',
      runs,
      p50Ms: round(p50),
      p95Ms: round(percentile(from202, 95)),
      maxMs: round(Math.max(...from202)),
      fromRequestSentP50Ms: round(percentile(fromSend, 50)),
      goalP50Ms: 100,
      met: p50 < 100,
      load1,
    },
  ];
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
