// The reference capture flow's HTTP side: the webhook the ledger dispatches levels to.
//
//   POST /crawl    Bearer $CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN, body DispatchBody → 202 at once;
//                  the level is captured and reported asynchronously. Query string = test knobs.
//   GET  /health   no auth
//   GET  /knobs, PUT /knobs   the process's test knobs (Bearer token)
//   GET  /hosts    per host: every capture's submittedAt/finishedAt (Bearer token)
//   GET  /levels   every level received and what became of its report (Bearer token)
//
// Levels are captured one at a time (two crawls never run at once anyway, and this keeps the
// per-host spacing whole across levels); reporting runs after, so a slow ledger holds nothing up.
import { generateKeyPairSync, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { CAPTURE_FORMATS, type Config } from '../config/env.ts';
import type { DispatchBody, LevelReportBody } from '../domain/contract.ts';
import type { WaczSigner } from '../domain/wacz/write.ts';
import { KnobError, mergeKnobs, parseKnobs, type FlowKnobs } from './knobs.ts';
import { captureLevel, HostLog, parseNotBefore } from './level.ts';
import { authFromConfig, DEFAULT_RETRY, refusalLine, refused, sendReport, type ReportAuth, type ReportOutcome, type RetryPolicy } from './report.ts';
import { fetchRobotsTxt, RobotsCache } from './robots-cache.ts';
import { createAddressPolicy } from '../domain/address-policy.ts';
import { CaptureBrowser } from './browser/launch.ts';
import { DEFAULT_HEARTBEAT_INTERVAL_MS, LevelHeartbeat } from './heartbeat.ts';
import { createGuardedFetcher, type Resolver } from './fetch.ts';
import { createS3 } from '../s3/client.ts';
import { s3Store, type ArtifactStore } from './store.ts';

export const FLOW_VERSION = '0.1.0';
/** settled levels kept for GET /levels and waitForLevel */
const KEEP_LEVELS = 200;
export const FLOW_SOFTWARE = `capture-ledger-flow/${FLOW_VERSION}`;
export const FLOW_USER_AGENT = `capture-ledger-flow/${FLOW_VERSION} (+reference capture flow)`;

export type LevelState = 'queued' | 'capturing' | 'reporting' | 'reported' | 'report-failed' | 'dropped' | 'failed';

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

export interface FlowOptions {
  config: Pick<Config, 's3' | 'crawl' | 'identity' | 'flowPort' | 'capture'>;
  /** default config.flowPort; 0 picks a free port */
  port?: number;
  host?: string;
  knobs?: FlowKnobs;
  /** default: S3 from config.s3, bucket config.s3.bucket */
  store?: ArtifactStore;
  /** default: from config.identity (a JWT from the issuer, else the dev headers) */
  reportAuth?: ReportAuth;
  reportRetry?: RetryPolicy;
  /** how long robots.txt is kept per origin (default 5 min) */
  robotsTtlMs?: number;
  /** how host names are resolved before the address policy checks them (tests stage DNS rebinding) */
  resolve?: Resolver;
  /** how often a level in progress sends its heartbeat when the dispatch names a heartbeatUrl (default 5 s) */
  heartbeatIntervalMs?: number;
  log?: (line: string) => void;
}

export interface Flow {
  /** http://127.0.0.1:port */
  url: string;
  /** url + /crawl: what CAPTURE_LEDGER_CRAWL_WEBHOOK_URL should say */
  webhookUrl: string;
  port: number;
  hostLog: HostLog;
  levels: LevelRun[];
  readonly knobs: FlowKnobs;
  setKnobs(knobs: FlowKnobs): void;
  level(crawlId: string, depth: number): LevelRun | undefined;
  /** waits for the level to arrive and settle (reported, dropped or failed) */
  waitForLevel(crawlId: string, depth: number, timeoutMs?: number): Promise<LevelRun>;
  /** waits until no level is in progress */
  idle(): Promise<void>;
  close(): Promise<void>;
  /**
   * Dies as a killed process would (tests): stops accepting at once and sends no heartbeat; no
   * further page starts and nothing more is written or reported. A new flow may then listen on
   * the same port.
   */
  kill(): Promise<void>;
}

const dispatchSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['crawlId', 'depth', 'orgId', 'reportUrl', 'formats', 'signing', 'perHostDelayMs', 'hostParallelism', 'notBefore', 'pages'],
  properties: {
    crawlId: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9._-]+$' },
    depth: { type: 'integer', minimum: 0 },
    orgId: { type: 'string', minLength: 1 },
    reportUrl: { type: 'string', minLength: 1 },
    formats: { type: 'array', minItems: 1, items: { type: 'string', enum: [...CAPTURE_FORMATS] } },
    signing: { type: 'boolean' },
    perHostDelayMs: { type: 'integer', minimum: 0 },
    hostParallelism: { type: 'integer', minimum: 1 },
    notBefore: { type: 'object', additionalProperties: { type: 'string' } },
    pages: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['url', 'follow'], properties: { url: { type: 'string', minLength: 1 }, follow: { type: 'boolean' } } },
    },
    capability: { type: 'string', minLength: 1, maxLength: 512 },
    // keys are `${artifactPrefix}<taskId>…`: relative, ends with '/', no empty/'.'/'..' segment
    artifactPrefix: { type: 'string', minLength: 2, maxLength: 1024, pattern: '^(?!/)(?!.*(^|/)\\.{1,2}/)(?!.*//).*/$' },
    deadline: { type: 'string', minLength: 1, maxLength: 64 },
    heartbeatUrl: { type: 'string', minLength: 1, maxLength: 2048 },
  },
} as const;

function httpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function sameToken(got: string, want: string): boolean {
  const a = Buffer.from(got);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function startFlow(opts: FlowOptions): Promise<Flow> {
  const token = opts.config.crawl.webhook?.token;
  if (token === undefined) throw new Error('CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN is not set: the capture flow checks it on every dispatch and cannot run without it');
  const log = opts.log ?? (() => {});
  const store = opts.store ?? s3Store(createS3(opts.config.s3), opts.config.s3.bucket);
  const reportAuth = opts.reportAuth ?? authFromConfig(opts.config.identity);
  const retry = opts.reportRetry ?? DEFAULT_RETRY;
  const policy = createAddressPolicy(opts.config.capture.allow, opts.config.capture.deniedPorts);
  const fetcher = createGuardedFetcher(policy, opts.resolve ? { resolve: opts.resolve } : {});
  const robots = new RobotsCache((url) => fetchRobotsTxt(fetcher, url, FLOW_USER_AGENT), opts.robotsTtlMs ?? 5 * 60_000);
  const hostLog = new HostLog();
  // one Chromium per flow, launched by the first capture, closed by close()
  const browser = new CaptureBrowser(log);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signer: WaczSigner = { privateKey, publicKey };
  let knobs: FlowKnobs = opts.knobs ?? {};
  const levels: LevelRun[] = [];
  let captureChain: Promise<void> = Promise.resolve();
  const inProgress = new Set<Promise<void>>();
  let killed = false;
  const beating = new Set<LevelHeartbeat>();

  const runLevel = (run: LevelRun): Promise<void> => {
    // alive from the moment the level is accepted, also while it waits behind another level
    const heartbeat = new LevelHeartbeat(run.dispatch, { auth: reportAuth, intervalMs: opts.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS, log });
    beating.add(heartbeat);
    heartbeat.start();
    const captured = captureChain.then(async () => {
      run.state = 'capturing';
      log(`level ${run.crawlId}/${run.depth}: ${run.dispatch.pages.length} pages`);
      run.report = await captureLevel(run.dispatch, { store, robots, hostLog, knobs: run.knobs, userAgent: FLOW_USER_AGENT, software: FLOW_SOFTWARE, signer, log, fetcher, browser, heartbeat, stopped: () => killed });
    });
    captureChain = captured.catch(() => {});
    return captured
      .then(async () => {
        if (killed) {
          run.state = 'dropped';
          return;
        }
        const depths = run.knobs.dropReportDepths ?? [];
        if (depths.includes(run.depth)) {
          run.state = 'dropped';
          log(`level ${run.crawlId}/${run.depth}: report dropped (test knob "dropReportDepths")`);
          return;
        }
        run.state = 'reporting';
        run.outcome = await sendReport(run.dispatch.reportUrl, run.dispatch.orgId, run.report!, reportAuth, retry, run.dispatch.capability);
        run.state = run.outcome.delivered ? 'reported' : 'report-failed';
        const last = run.outcome.attempts.at(-1);
        log(`level ${run.crawlId}/${run.depth}: report ${run.state} (${last?.status ?? last?.error ?? '?'}, ${run.outcome.attempts.length} attempt(s))`);
        if (refused(run.outcome.status)) {
          const line = refusalLine(run.crawlId, run.depth, run.outcome);
          log(line);
          // whoever runs the flow must see it even with no log sink configured
          if (opts.log === undefined) console.error(line);
        }
      })
      .catch((err: unknown) => {
        run.state = 'failed';
        run.error = (err as Error).message;
        log(`level ${run.crawlId}/${run.depth}: failed: ${run.error}`);
      })
      .finally(async () => {
        beating.delete(heartbeat);
        await heartbeat.stop();
      });
  };

  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024, ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: true } } });

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

  app.get('/health', async () => ({ ok: true, software: FLOW_SOFTWARE }));

  app.post<{ Body: DispatchBody; Querystring: Record<string, unknown> }>('/crawl', { schema: { body: dispatchSchema } }, async (request, reply) => {
    const d = request.body;
    const bad = d.pages.filter((p) => !httpUrl(p.url)).map((p) => p.url);
    if (bad.length > 0) return reply.code(400).send({ error: 'invalid dispatch', detail: 'pages must be http(s) URLs', urls: bad.slice(0, 20) });
    if (!httpUrl(d.reportUrl)) return reply.code(400).send({ error: 'invalid dispatch', detail: 'reportUrl must be an http(s) URL' });
    try {
      parseNotBefore(d.notBefore);
    } catch (err) {
      return reply.code(400).send({ error: 'invalid dispatch', detail: (err as Error).message });
    }
    const runKnobs = mergeKnobs(knobs, parseKnobs(request.query ?? {}));
    const running = levels.find((l) => l.crawlId === d.crawlId && l.depth === d.depth && ['queued', 'capturing', 'reporting'].includes(l.state));
    if (running !== undefined) return reply.code(202).send({ accepted: true, duplicate: true, crawlId: d.crawlId, depth: d.depth, pages: d.pages.length });
    const run = { crawlId: d.crawlId, depth: d.depth, dispatch: d, knobs: runKnobs, state: 'queued', receivedAt: new Date().toISOString() } as LevelRun;
    levels.push(run);
    run.done = runLevel(run);
    inProgress.add(run.done);
    void run.done.finally(() => {
      inProgress.delete(run.done);
      // a long-running dev process keeps the most recent settled levels only
      const settled = levels.filter((l) => !['queued', 'capturing', 'reporting'].includes(l.state));
      for (const old of settled.slice(0, Math.max(0, settled.length - KEEP_LEVELS))) levels.splice(levels.indexOf(old), 1);
    });
    return reply.code(202).send({ accepted: true, crawlId: d.crawlId, depth: d.depth, pages: d.pages.length });
  });

  app.get('/knobs', async () => knobs);
  app.put<{ Body: Record<string, unknown> }>('/knobs', async (request) => {
    knobs = parseKnobs(request.body ?? {});
    return knobs;
  });

  app.get('/hosts', async () =>
    Object.fromEntries(Object.entries(hostLog.all()).map(([h, list]) => [h, list.map((c) => ({ ...c, submittedAt: new Date(c.submittedAt).toISOString(), finishedAt: new Date(c.finishedAt).toISOString() }))])),
  );

  app.get('/levels', async () => levels.map((l) => ({ crawlId: l.crawlId, depth: l.depth, state: l.state, receivedAt: l.receivedAt, pages: l.dispatch.pages.length, report: l.report, outcome: l.outcome, error: l.error })));

  await app.listen({ port: opts.port ?? opts.config.flowPort, host: opts.host ?? '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;

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
    level: (crawlId, depth) => levels.find((l) => l.crawlId === crawlId && l.depth === depth),
    async waitForLevel(crawlId, depth, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const run = [...levels].reverse().find((l) => l.crawlId === crawlId && l.depth === depth);
        if (run !== undefined) {
          const left = until - Date.now();
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([run.done, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`level ${crawlId}/${depth} did not settle within ${timeoutMs} ms (state ${run.state})`)), Math.max(0, left))))]).finally(() => clearTimeout(timer));
          return run;
        }
        if (Date.now() > until) throw new Error(`level ${crawlId}/${depth} was never dispatched to the flow within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async idle() {
      while (inProgress.size > 0) await Promise.all([...inProgress]);
    },
    async close() {
      await app.close();
      await flow.idle();
      await browser.close();
    },
    async kill() {
      killed = true;
      await Promise.all([...beating].map((h) => h.stop()));
      app.server.closeAllConnections();
      await app.close();
      await flow.idle();
      await browser.close();
    },
  };
  return flow;
}
