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
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DispatchBody, LevelReportBody } from '../domain/contract.ts';
import { allowedHosts, checkHost } from '../domain/host-header.ts';
import { buildLevelReport, createFlowActivities } from './activities/report.ts';
import { startCaptureWorker, type CaptureWorker, type CaptureWorkerOptions } from './capture-worker/worker.ts';
import type { FlowConfig } from './config.ts';
import { dispatchSchema, validateDispatch } from './dispatch.ts';
import { DEFAULT_HEARTBEAT_INTERVAL_MS } from './heartbeat.ts';
import { KnobError, mergeKnobs, parseKnobs, type FlowKnobs } from './knobs.ts';
import { HostLog, levelPrefix } from './level.ts';
import { LEVEL_WORKFLOW, levelWorkflowId } from './names.ts';
import { authFromConfig, type ReportAuth } from './report.ts';
import { CAPTURE_SOFTWARE, CAPTURE_USER_AGENT } from './version.ts';
import { levelStateQuery, redispatchSignal, type LevelInput, type LevelPhase, type ReportOutcome } from './workflows/messages.ts';

export const FLOW_USER_AGENT = CAPTURE_USER_AGENT;
export const FLOW_SOFTWARE = CAPTURE_SOFTWARE;
export const WORKFLOWS_PATH = new URL('./workflows/index.ts', import.meta.url).pathname;
/** settled levels kept for GET /levels and waitForLevel */
const KEEP_LEVELS = 200;
/** how often a level's state is read back from its workflow for GET /levels and the tests */
const WATCH_INTERVAL_MS = 500;

export type LevelState = 'queued' | LevelPhase;
const SETTLED: readonly LevelState[] = ['reported', 'report-failed', 'dropped', 'failed'];

export interface LevelRun {
  crawlId: string;
  depth: number;
  dispatch: DispatchBody;
  knobs: FlowKnobs;
  state: LevelState;
  receivedAt: string;
  report?: LevelReportBody;
  outcome?: ReportOutcome;
  error?: string;
  /** settles when the level is reported, dropped or failed */
  done: Promise<void>;
}

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
  const token = opts.config.webhookToken;
  const log = opts.log ?? (() => {});
  const parts = await startParts(opts, log);
  const { client } = parts;
  const hostLog = parts.capture?.hostLog ?? new HostLog();
  let knobs: FlowKnobs = opts.knobs ?? {};
  const levels: LevelRun[] = [];
  let killed = false;

  /** Reads the level's state back from its workflow until it settles. */
  const watch = async (run: LevelRun): Promise<void> => {
    const handle = client.workflow.getHandle(levelWorkflowId(run.crawlId, run.depth));
    for (;;) {
      if (killed) {
        run.state = 'dropped';
        return;
      }
      const s = await handle.query(levelStateQuery).catch(() => undefined);
      if (s !== undefined) {
        run.outcome = s.outcome ?? run.outcome;
        if (s.error !== undefined) run.error = s.error;
        if (SETTLED.includes(s.phase)) {
          if (s.phase !== 'failed')
            run.report = await buildLevelReport(
              client,
              { crawlId: run.crawlId, depth: run.depth, orgId: run.dispatch.orgId, prefix: levelPrefix(run.dispatch) },
              s.slices,
            ).catch(() => undefined);
          run.state = s.phase;
          return;
        }
        run.state = s.phase;
      }
      await new Promise((r) => setTimeout(r, WATCH_INTERVAL_MS));
    }
  };

  const track = (dispatch: DispatchBody, runKnobs: FlowKnobs): LevelRun => {
    const run = {
      crawlId: dispatch.crawlId,
      depth: dispatch.depth,
      dispatch,
      knobs: runKnobs,
      state: 'queued',
      receivedAt: new Date().toISOString(),
    } as LevelRun;
    levels.push(run);
    run.done = watch(run).finally(() => {
      const settled = levels.filter((l) => SETTLED.includes(l.state));
      for (const old of settled.slice(0, Math.max(0, settled.length - KEEP_LEVELS))) levels.splice(levels.indexOf(old), 1);
    });
    return run;
  };

  const app: FastifyInstance = Fastify({
    logger: false,
    bodyLimit: 16 * 1024 * 1024,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: true } },
  });

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

  app.get('/health', async () => ({ ok: true, software: CAPTURE_SOFTWARE }));

  app.post<{ Body: DispatchBody; Querystring: Record<string, unknown> }>('/crawl', { schema: { body: dispatchSchema } }, async (request, reply) => {
    const d = request.body;
    const bad = validateDispatch(d);
    if (bad !== undefined) return reply.code(400).send({ error: 'invalid dispatch', ...bad });
    const runKnobs = mergeKnobs(knobs, parseKnobs(request.query ?? {}));
    const workflowId = levelWorkflowId(d.crawlId, d.depth);
    const status = await client.workflow
      .getHandle(workflowId)
      .describe()
      .then((x) => x.status.name)
      .catch(() => undefined);
    const running = status === 'RUNNING';
    // a run of this level that closed: what it captured is reused, not captured again
    const prior =
      status === 'COMPLETED'
        ? await client.workflow
            .getHandle(workflowId)
            .result()
            .then((r: { slices: string[] }) => r.slices)
            .catch(() => [])
        : [];
    const input: LevelInput = {
      dispatch: d,
      knobs: runKnobs,
      captureQueue: opts.config.temporal.captureQueue,
      heartbeatIntervalMs: opts.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS,
      receivedAt: Date.now(),
      ...(prior.length > 0 ? { priorSlices: prior } : {}),
      ...(opts.reportRetry ? { reportRetry: opts.reportRetry } : {}),
    };
    await client.workflow.signalWithStart(LEVEL_WORKFLOW, {
      workflowId,
      taskQueue: opts.config.temporal.flowQueue,
      args: [input],
      signal: redispatchSignal,
      signalArgs: [input],
    });
    const known = latest(d.crawlId, d.depth);
    if (known === undefined || SETTLED.includes(known.state)) track(d, runKnobs);
    log(`level ${d.crawlId}/${d.depth}: ${d.pages.length} pages${running ? ' (dispatched again: the running level takes it)' : ''}`);
    return reply.code(202).send({ accepted: true, ...(running ? { duplicate: true } : {}), crawlId: d.crawlId, depth: d.depth, pages: d.pages.length });
  });

  app.get('/knobs', async () => knobs);
  app.put<{ Body: Record<string, unknown> }>('/knobs', async (request) => {
    knobs = parseKnobs(request.body ?? {});
    return knobs;
  });

  app.get('/hosts', async () =>
    Object.fromEntries(
      Object.entries(hostLog.all()).map(([h, list]) => [
        h,
        list.map((c) => ({ ...c, submittedAt: new Date(c.submittedAt).toISOString(), finishedAt: new Date(c.finishedAt).toISOString() })),
      ]),
    ),
  );

  app.get('/levels', async () =>
    levels.map((l) => ({
      crawlId: l.crawlId,
      depth: l.depth,
      state: l.state,
      receivedAt: l.receivedAt,
      pages: l.dispatch.pages.length,
      report: l.report,
      outcome: l.outcome,
      error: l.error,
    })),
  );

  await app.listen({ port: opts.port ?? opts.config.port, host: opts.host ?? '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  const latest = (crawlId: string, depth: number): LevelRun | undefined => [...levels].reverse().find((l) => l.crawlId === crawlId && l.depth === depth);

  /** A level another receiver accepted: followed from its workflow. */
  const attach = async (crawlId: string, depth: number): Promise<LevelRun | undefined> => {
    const s = await client.workflow
      .getHandle(levelWorkflowId(crawlId, depth))
      .query(levelStateQuery)
      .catch(() => undefined);
    if (s === undefined) return undefined;
    return latest(crawlId, depth) ?? track(s.dispatch, {});
  };

  const flow: Flow = {
    url,
    webhookUrl: `${url}/crawl`,
    port,
    hostLog,
    levels,
    get knobs() {
      return knobs;
    },
    setKnobs(k) {
      knobs = k;
    },
    level: latest,
    async waitForLevel(crawlId, depth, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const run = latest(crawlId, depth) ?? (await attach(crawlId, depth));
        if (run !== undefined) {
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise(
            (_, reject) =>
              (timer = setTimeout(
                () => reject(new Error(`level ${crawlId}/${depth} did not settle within ${timeoutMs} ms (state ${run.state})`)),
                Math.max(0, until - Date.now()),
              )),
          );
          await Promise.race([run.done, late]).finally(() => clearTimeout(timer));
          return run;
        }
        if (Date.now() > until) throw new Error(`level ${crawlId}/${depth} was never dispatched to the flow within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async idle() {
      await Promise.all(levels.map((l) => l.done));
    },
    async close() {
      await app.close();
      await flow.idle();
      await parts.capture?.shutdown();
      await parts.close();
    },
    async kill() {
      killed = true;
      app.server.closeAllConnections();
      await app.close();
      await parts.capture?.kill();
      await parts.close();
      await flow.idle();
    },
  };
  return flow;
}
