// The reference capture flow's receiver: the webhook the ledger dispatches levels to, and the
// flow worker that runs the level workflows and their report and heartbeat activities. Capture
// itself happens in capture workers (src/flow/capture-worker), any number on any machine; tests
// start one in this process.
//
//   POST /crawl    Bearer $CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN, body DispatchBody → 202 once the
//                  level workflow has it (signal-with-start: a repeated dispatch reaches the run
//                  already capturing the level). Query string = test knobs.
//   GET  /health   no auth
//   GET  /knobs, PUT /knobs   the process's test knobs (Bearer token)
//   GET  /hosts    per host: every capture this process's capture worker made (Bearer token)
//   GET  /levels   every level this receiver accepted and what became of it (Bearer token)
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DispatchBody } from '../domain/contract.ts';
import { splitPages } from '../domain/dispatch-parts.ts';
import { allowedHosts, checkHost } from '../domain/host-header.ts';
import { createFlowActivities } from './activities/report.ts';
import { startCaptureWorker, type CaptureWorker, type CaptureWorkerOptions } from './capture-worker/worker.ts';
import type { FlowConfig } from './config.ts';
import { dispatchSchema, validateDispatch } from './dispatch.ts';
import { DEFAULT_HEARTBEAT_INTERVAL_MS } from './heartbeat.ts';
import { KnobError, mergeKnobs, parseKnobs, type FlowKnobs } from './knobs.ts';
import { HostLog } from './level.ts';
import { LevelRuns, SETTLED, type LevelRun } from './level-runs.ts';
import { LEVEL_WORKFLOW, levelWorkflowId } from './names.ts';
import { authFromConfig, type ReportAuth } from './report.ts';
import { CAPTURE_SOFTWARE } from './version.ts';
import { dispatchPartSignal, redispatchSignal, type LevelInput } from './workflows/messages.ts';

export type { LevelRun } from './level-runs.ts';

export const WORKFLOWS_PATH = new URL('./workflows/index.ts', import.meta.url).pathname;

export interface ReportRetry {
  attempts: number;
  baseDelayMs: number;
}

export interface FlowOptions {
  config: FlowConfig;
  /** default config.port; 0 picks a free port */
  port?: number;
  host?: string;
  knobs?: FlowKnobs;
  /** default: from config.identity (a JWT from the issuer, else the dev headers) */
  reportAuth?: ReportAuth;
  /** default: tried until the level's deadline */
  reportRetry?: ReportRetry;
  /** how often a level in progress sends its heartbeat when the dispatch names a heartbeatUrl (default 5 s) */
  heartbeatIntervalMs?: number;
  /** a bundle of ./workflows made once (tests); otherwise bundled now */
  workflowBundlePath?: string;
  /** the URLs the ledger reaches the receiver at besides its bind address (a proxy's name) */
  publicUrls?: string[];
  /** a capture worker in this process too (tests; npm start runs them as processes of their own) */
  capture?: Omit<CaptureWorkerOptions, 'connection' | 'log'>;
  log?: (line: string) => void;
}

export interface Flow {
  /** http://127.0.0.1:port */
  url: string;
  /** url + /crawl: what CAPTURE_LEDGER_CRAWL_WEBHOOK_URL should say */
  webhookUrl: string;
  port: number;
  /** what this process's capture worker did to each host */
  hostLog: HostLog;
  levels: LevelRun[];
  readonly knobs: FlowKnobs;
  setKnobs(knobs: FlowKnobs): void;
  level(crawlId: string, depth: number): LevelRun | undefined;
  /** waits for the level (received here, or by an earlier receiver) to settle */
  waitForLevel(crawlId: string, depth: number, timeoutMs?: number): Promise<LevelRun>;
  /** waits until no level received here is in progress */
  idle(): Promise<void>;
  close(): Promise<void>;
  /**
   * Dies as a killed process would (tests): stops accepting at once, its workers stop polling and
   * its capture worker visits and writes nothing more. The levels live on in Temporal: a new flow
   * (or any capture worker) takes them up where they were.
   */
  kill(): Promise<void>;
}

function sameToken(got: string, want: string): boolean {
  const a = Buffer.from(got);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
}

interface Parts {
  client: Client;
  worker: Worker;
  running: Promise<void>;
  capture: CaptureWorker | undefined;
  close(): Promise<void>;
}

async function startParts(opts: FlowOptions, log: (line: string) => void): Promise<Parts> {
  const { temporal } = opts.config;
  const native = await NativeConnection.connect({ address: temporal.address });
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: temporal.namespace });
  const auth = opts.reportAuth ?? authFromConfig(opts.config.identity);
  const worker = await Worker.create({
    connection: native,
    namespace: temporal.namespace,
    taskQueue: temporal.flowQueue,
    activities: createFlowActivities({ auth, log, ...(opts.log === undefined ? { loud: (line: string) => console.error(line) } : {}) }),
    ...(opts.workflowBundlePath !== undefined ? { workflowBundle: { codePath: opts.workflowBundlePath } } : { workflowsPath: WORKFLOWS_PATH }),
    shutdownGraceTime: '5 seconds',
  });
  const running = worker.run();
  const capture = opts.capture === undefined ? undefined : await startCaptureWorker({ ...opts.capture, connection: native, log });
  return {
    client,
    worker,
    running,
    capture,
    async close() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await native.close();
      await connection.close();
    },
  };
}

export async function startFlow(opts: FlowOptions): Promise<Flow> {
  const log = opts.log ?? (() => {});
  const parts = await startParts(opts, log);
  const hostLog = parts.capture?.hostLog ?? new HostLog();
  const runs = new LevelRuns(parts.client);
  const receiver: Receiver = { opts, client: parts.client, runs, hostLog, knobs: opts.knobs ?? {}, log };
  const app = receiverApp(receiver);
  await app.listen({ port: opts.port ?? opts.config.port, host: opts.host ?? '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  const flow: Flow = {
    url,
    webhookUrl: `${url}/crawl`,
    port,
    hostLog,
    levels: runs.levels,
    get knobs() {
      return receiver.knobs;
    },
    setKnobs(k) {
      receiver.knobs = k;
    },
    level: (crawlId, depth) => runs.latest(crawlId, depth),
    waitForLevel: (crawlId, depth, timeoutMs = 30_000) => runs.waitForLevel(crawlId, depth, timeoutMs),
    idle: () => runs.idle(),
    async close() {
      await app.close();
      await flow.idle();
      await parts.capture?.shutdown();
      await parts.close();
    },
    async kill() {
      runs.killed = true;
      app.server.closeAllConnections();
      await app.close();
      await parts.capture?.kill();
      await parts.close();
      await flow.idle();
    },
  };
  return flow;
}

/** What the receiver's routes share; knobs are the process's, replaced by PUT /knobs. */
interface Receiver {
  opts: FlowOptions;
  client: Client;
  runs: LevelRuns;
  hostLog: HostLog;
  knobs: FlowKnobs;
  log: (line: string) => void;
}

function receiverApp(receiver: Receiver): FastifyInstance {
  const app: FastifyInstance = Fastify({
    logger: false,
    bodyLimit: 16 * 1024 * 1024,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: true } },
  });
  guard(app, receiver.opts);
  app.get('/health', async () => ({ ok: true, software: CAPTURE_SOFTWARE }));
  app.post<{ Body: DispatchBody; Querystring: Record<string, unknown> }>('/crawl', { schema: { body: dispatchSchema } }, async (request, reply) => {
    const bad = validateDispatch(request.body);
    if (bad !== undefined) return reply.code(400).send({ error: 'invalid dispatch', ...bad });
    return reply.code(202).send(await acceptDispatch(receiver, request.body, mergeKnobs(receiver.knobs, parseKnobs(request.query ?? {}))));
  });
  app.get('/knobs', async () => receiver.knobs);
  app.put<{ Body: Record<string, unknown> }>('/knobs', async (request) => {
    receiver.knobs = parseKnobs(request.body ?? {});
    return receiver.knobs;
  });
  app.get('/hosts', async () => hostsView(receiver.hostLog));
  app.get('/levels', async () => levelsView(receiver.runs.levels));
  return app;
}

/** The Host check, the bearer token and the error answers, before and around every route. */
function guard(app: FastifyInstance, opts: FlowOptions): void {
  const token = opts.config.webhookToken;
  // DNS rebinding: only the names the receiver listens on (421 for any other Host, before anything)
  let allowed: Set<string> | undefined;
  app.addHook('onRequest', async (request, reply) => {
    const address = app.server.address() as AddressInfo;
    allowed ??= allowedHosts({ host: address.address, port: address.port }, opts.publicUrls ?? []);
    const decision = checkHost(request.headers.host, allowed);
    if (!decision.ok) return reply.code(decision.status).send({ error: decision.error });
  });

  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'GET' && request.url === '/health') return;
    const m = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '');
    if (!m || !sameToken(m[1]!.trim(), token)) return reply.code(401).send({ error: 'unauthenticated' });
  });

  app.setErrorHandler((err: Error & { validation?: unknown; statusCode?: number }, _request, reply) => {
    if (err.validation) return reply.code(400).send({ error: 'invalid dispatch', detail: err.message });
    if (err instanceof KnobError) return reply.code(400).send({ error: err.message });
    const code = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    return reply.code(code).send({ error: err.message });
  });
}

/** POST /crawl: the level workflow signalled-with-start (a repeated dispatch reaches the run already
 * capturing it), its pages in parts when they are too many for one payload, and followed here. */
async function acceptDispatch(receiver: Receiver, d: DispatchBody, runKnobs: FlowKnobs): Promise<Record<string, unknown>> {
  const { opts, client, runs } = receiver;
  const workflowId = levelWorkflowId(d.crawlId, d.depth);
  const status = await client.workflow
    .getHandle(workflowId)
    .describe()
    .then((x) => x.status.name)
    .catch(() => undefined);
  const running = status === 'RUNNING';
  const prior = status === 'COMPLETED' ? await priorSlices(client, workflowId) : [];
  const [first, ...rest] = splitPages(d.pages);
  const parts = rest.length > 0 ? { id: randomUUID(), count: rest.length + 1 } : undefined;
  const input: LevelInput = {
    dispatch: { ...d, pages: first! },
    knobs: runKnobs,
    captureQueue: opts.config.temporal.captureQueue,
    heartbeatIntervalMs: opts.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS,
    receivedAt: Date.now(),
    ...(prior.length > 0 ? { priorSlices: prior } : {}),
    ...(opts.reportRetry ? { reportRetry: opts.reportRetry } : {}),
    ...(parts !== undefined ? { parts } : {}),
  };
  const level = await client.workflow.signalWithStart(LEVEL_WORKFLOW, {
    workflowId,
    taskQueue: opts.config.temporal.flowQueue,
    args: [input],
    signal: redispatchSignal,
    signalArgs: [input],
  });
  // in order, after the first: a receiver that dies between them leaves the level waiting, and the
  // ledger, answered nothing, dispatches it again
  for (const [i, pages] of rest.entries()) await level.signal(dispatchPartSignal, { id: parts!.id, index: i + 1, pages });
  const known = runs.latest(d.crawlId, d.depth);
  if (known === undefined || SETTLED.includes(known.state)) runs.track(d, runKnobs);
  receiver.log(`level ${d.crawlId}/${d.depth}: ${d.pages.length} pages${running ? ' (dispatched again: the running level takes it)' : ''}`);
  return { accepted: true, ...(running ? { duplicate: true } : {}), crawlId: d.crawlId, depth: d.depth, pages: d.pages.length };
}

/** A run of this level that closed: what it captured is reused, not captured again. */
function priorSlices(client: Client, workflowId: string): Promise<string[]> {
  return client.workflow
    .getHandle(workflowId)
    .result()
    .then((r: { slices: string[] }) => r.slices)
    .catch(() => []);
}

function hostsView(hostLog: HostLog): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(hostLog.all()).map(([h, list]) => [
      h,
      list.map((c) => ({ ...c, submittedAt: new Date(c.submittedAt).toISOString(), finishedAt: new Date(c.finishedAt).toISOString() })),
    ]),
  );
}

function levelsView(levels: readonly LevelRun[]): Record<string, unknown>[] {
  return levels.map((l) => ({
    crawlId: l.crawlId,
    depth: l.depth,
    state: l.state,
    receivedAt: l.receivedAt,
    pages: l.dispatch.pages.length,
    report: l.report,
    outcome: l.outcome,
    error: l.error,
  }));
}
