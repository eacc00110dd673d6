// The one integration harness: a test file says which real parts it needs and gets them started
// in dependency order (independent ones at once), each on its own database, OpenFGA store, task
// queue and port, and torn down in reverse order, whatever failed to start.
//
//   const h = useHarness({ crawls: 'stub', grants: [['alice', 'submitter', 'acme']] });
//   it('…', async () => { await fetch(`${h.api.url}/api/crawls`, …); h.hook.dispatches … });
//
// Parts: always a test database and an OpenFGA store; the API unless `api: false`; `issuer` for
// real JWTs (the API then trusts it instead of the dev identity); `temporal` a Temporal client;
// `worker` adds it and a worker on a task queue of its own; `crawls` adds both and the webhook: a
// stub that records dispatches ('stub') or the reference capture flow ('flow', with a test site);
// `replay` the replay server (the API links to it); `gateways` private S3 / OpenFGA servers the
// worker goes through, which a fault test stops and starts. With crawls or gateways, every test
// ends with no crawl running and every gateway up (afterEach), so no test depends on what an
// earlier one left.
//
// The type follows the options: `Harness<O>` has only the parts `O` asks for (`h.tw` does not
// typecheck without `worker` or `crawls`, `h.api` does not with `api: false`).
import type { S3Client } from '@aws-sdk/client-s3';
import type { OpenFgaClient } from '@openfga/sdk';
import type { Client } from '@temporalio/client';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Config } from '../../src/config/env.ts';
import { startFlow, type Flow, type FlowOptions } from '../../src/flow/server.ts';
import type { Resolver } from '../../src/flow/fetch.ts';
import { createS3 } from '../../src/s3/client.ts';
import { devHeaders, startTestApi, startTestIssuer, testApiConfig, type TestApi, type TestApiOptions, type TestIdentity, type TestIssuer } from './api.ts';
import { endRunningCrawls, grant, startWebhookStub, type WebhookStub } from './crawls.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { createTestStore, type TestStore } from './fga.ts';
import { newFlowQueues, testFlowOptions, type FlowQueues } from './flow.ts';
import {
  connectTemporal,
  once,
  restartStoppedGateways,
  startGateways,
  startIf,
  startReplayServer,
  Teardown,
  workerClients,
  type Gateways,
  type ReplayServer,
} from './harness-parts.ts';
import type { PrivateService } from './private.ts';
import { startSite, type Site, type SiteOptions } from './site.ts';
import { startTestWorker, uniqueTaskQueue, type TestWorker } from './temporal.ts';

export type { ReplayServer } from './harness-parts.ts';

export type Grant = [subject: string, relation: 'submitter' | 'admin', orgId: string];

type FlowPick = Partial<Pick<FlowOptions, 'heartbeatIntervalMs' | 'knobs' | 'log' | 'reportRetry'>> & {
  resolve?: Resolver;
  /** false: no capture worker in the flow's process (the test starts the ones it wants) */
  captureWorker?: false;
};

export interface HarnessOptions {
  /** a dev issuer whose JWTs the API trusts (default: the dev identity headers) */
  issuer?: boolean;
  /** Temporal, a worker and the webhook: a recording stub, or the reference capture flow */
  crawls?: 'stub' | 'flow';
  /** Temporal and a worker without a webhook (reconcile, outbox) */
  worker?: boolean;
  /** a Temporal client (h.temporal) without a worker: the API's, too */
  temporal?: boolean;
  /** false: no API (the worker then runs with the plain test configuration) */
  api?: false;
  /** the test site (with crawls: 'flow', what the flow captures) */
  site?: SiteOptions;
  /** the reference flow's options (crawls: 'flow') */
  flow?: FlowPick;
  /** the replay server, in front of the test bucket; the API's CAPTURE_LEDGER_REPLAY_URL */
  replay?: boolean;
  /** private S3 / OpenFGA servers on the shared data, the worker's way to them (test/support/private.ts) */
  gateways?: { s3?: boolean; fga?: boolean };
  /** environment overrides for the API's and worker's configuration */
  env?: Record<string, string>;
  /** wraps the OpenFGA client the API is given (e.g. to count its calls) */
  apiFga?: (client: OpenFgaClient) => OpenFgaClient;
  /** more of the API's deps */
  apiDeps?: TestApiOptions['deps'];
  /** tuples written once everything is up */
  grants?: Grant[];
}

/** What every harness has. */
export interface HarnessCore {
  tdb: TestDatabase;
  store: TestStore;
  /** the environment the API was started with (to start another API like it) */
  env: Record<string, string>;
  /** the configuration the worker runs with (the API's, with its real public URL, when there is one) */
  config: Config;
  s3: S3Client;
  bucket: string;
  /** JSON headers for `subject` in `orgs`: a JWT with `issuer`, dev headers without */
  as(subject: string, orgs: string[]): Promise<Record<string, string>>;
  /** a reference capture flow of the test's own (closed with the harness), e.g. behind the stub's relay */
  startFlow(options?: Partial<Omit<FlowOptions, 'config'>> & { resolve?: Resolver }): Promise<Flow>;
  /** another dev issuer (closed with the harness), one the API does not trust */
  startIssuer(): Promise<TestIssuer>;
  /** another API on the same database and store (closed with the harness, or by the test) */
  startApi(options?: Omit<TestApiOptions, 'tdb' | 'store'>): Promise<TestApi>;
  /** restarts a stopped gateway, ends running crawls (workflow terminated, row failed), waits for the flow to be idle and resets its knobs and the stub's relay */
  endRunning(): Promise<void>;
  close(): Promise<void>;
}

export interface ApiPart {
  api: TestApi;
  /** stops the API, runs `whileDown`, then starts an API like it on the same port (h.api) */
  restartApi(whileDown?: () => Promise<void>): Promise<TestApi>;
}
export interface IssuerPart {
  issuer: TestIssuer;
}
export interface TemporalPart {
  temporal: Client;
}
export interface WorkerPart {
  tw: TestWorker;
}
export interface StubPart {
  hook: WebhookStub;
}
export interface FlowPart {
  /** replaced by restartFlow */
  flow: Flow;
  /** the task queues of the harness's flow: another capture worker may join them */
  flowQueues: FlowQueues;
  /** kills the flow (Flow.kill) and starts a new one on its port */
  restartFlow(): Promise<Flow>;
}
export interface SitePart {
  site: Site;
}
export interface ReplayPart {
  replay: ReplayServer;
}
export interface S3GatewayPart {
  gateways: { s3: PrivateService };
  /** the worker's S3 client (through the gateway) */
  workerS3: S3Client;
}
export interface FgaGatewayPart {
  gateways: { fga: PrivateService };
  /** the worker's OpenFGA client (through the gateway) */
  workerFga: OpenFgaClient;
}

type HasWorker<O> = O extends { crawls: 'stub' | 'flow' } ? true : O extends { worker: true } ? true : false;
type HasTemporal<O> = HasWorker<O> extends true ? true : O extends { temporal: true } ? true : false;
type If<C, Part> = C extends true ? Part : unknown;

/** The harness `O` asked for: its parts and nothing else. */
export type Harness<O extends HarnessOptions = Record<never, never>> = HarnessCore &
  (O extends { api: false } ? unknown : ApiPart) &
  (O extends { issuer: true } ? IssuerPart : unknown) &
  If<HasTemporal<O>, TemporalPart> &
  If<HasWorker<O>, WorkerPart> &
  (O extends { crawls: 'stub' } ? StubPart : unknown) &
  (O extends { crawls: 'flow' } ? FlowPart : unknown) &
  (O extends { site: object } ? SitePart : unknown) &
  (O extends { replay: true } ? ReplayPart : unknown) &
  (O extends { gateways: { s3: true } } ? S3GatewayPart : unknown) &
  (O extends { gateways: { fga: true } } ? FgaGatewayPart : unknown);

/** Inside the harness every part is a field, undefined when not asked for. */
type Parts = HarnessCore &
  ApiPart &
  IssuerPart &
  TemporalPart &
  WorkerPart &
  StubPart &
  FlowPart &
  SitePart &
  ReplayPart & { gateways: Gateways; workerS3: S3Client; workerFga: OpenFgaClient };

type NewFlow = (port: number, options?: Partial<FlowOptions> & { resolve?: Resolver }, own?: boolean) => Promise<Flow>;

interface Ctx {
  opts: HarnessOptions;
  h: Parts;
  teardown: Teardown;
  token: string;
  identity: TestIdentity;
}

const WEBHOOK_TOKEN = 'harness-webhook-token';

/** What needs nothing else, all at once: database, store, issuer, stub, site, replay, gateways. */
async function startIndependent(opts: HarnessOptions, h: Parts, teardown: Teardown): Promise<void> {
  const [tdb, store, issuer, hook, site, replay, gateways] = await Promise.all([
    createTestDatabase().then((t) => (teardown.add(() => t.drop()), t)),
    createTestStore(),
    startIf(opts.issuer, teardown, () => startTestIssuer()),
    startIf(opts.crawls === 'stub', teardown, startWebhookStub),
    startIf(opts.site, teardown, () => startSite(opts.site!)),
    startIf(opts.replay, teardown, startReplayServer),
    startGateways(opts.gateways, teardown),
  ]);
  Object.assign(h, { tdb, store, issuer, hook, site, replay, gateways });
}

/** Starts reference flows: the harness's own (on its queues, kept across restartFlow) or a test's. */
function flowStarter({ opts, h, token, identity }: Ctx): NewFlow {
  // the flow holds its own address policy: a test's allowlist applies to it as to the API
  const flowAllow = opts.env?.CAPTURE_LEDGER_CAPTURE_ALLOW;
  const flowConfig = testApiConfig({
    tdb: h.tdb,
    store: h.store,
    identity,
    env: { CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: token, ...(flowAllow !== undefined ? { CAPTURE_LEDGER_CAPTURE_ALLOW: flowAllow } : {}) },
  });
  const queues = newFlowQueues();
  h.flowQueues = queues;
  return (port, options = {}, own = false) => {
    const { resolve, captureWorker, ...rest } = { ...opts.flow, ...options };
    const { capture, ...base } = testFlowOptions(flowConfig, { webhookToken: token, ...(own ? {} : { queues }), ...(resolve ? { resolve } : {}) });
    return startFlow({ ...base, ...(captureWorker === false ? {} : { capture }), port, host: '127.0.0.1', ...rest });
  };
}

/** The starters of extra parts a test may ask for later; each is closed with the harness. */
function addStarters({ h, teardown }: Ctx, newFlow: NewFlow): void {
  h.startFlow = async (options) => {
    const flow = await newFlow(0, options, true);
    // a test may close it itself (a flow gone mid-crawl); the harness closes it only if not
    const close = once(() => flow.close());
    teardown.add(close);
    return { ...flow, close };
  };
  h.startApi = async (options) => {
    const api = await startTestApi({ tdb: h.tdb, store: h.store, ...options });
    const close = once(() => api.close());
    teardown.add(close);
    return { ...api, close };
  };
  h.startIssuer = async () => {
    const extra = await startTestIssuer();
    teardown.add(() => extra.close());
    return extra;
  };
}

/** The environment of the API and worker: the replay server, the webhook and a task queue of their own, then the test's. */
function harnessEnv({ opts, h, token }: Ctx, withWorker: boolean): Record<string, string> {
  const replay: Record<string, string> = h.replay === undefined ? {} : { CAPTURE_LEDGER_REPLAY_URL: h.replay.url };
  if (!withWorker) return { ...replay, ...opts.env };
  const webhookUrl = opts.crawls === 'flow' ? h.flow.webhookUrl : h.hook?.url;
  const webhook: Record<string, string> =
    webhookUrl === undefined ? {} : { CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: webhookUrl, CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: token };
  return { ...replay, ...webhook, CAPTURE_LEDGER_TEMPORAL_TASK_QUEUE: uniqueTaskQueue('harness'), ...opts.env };
}

/** The API on a free port, and restartApi to bring up another like it on that port. */
async function startApiPart({ opts, h, teardown, identity }: Ctx): Promise<void> {
  const fga = opts.apiFga?.(h.store.client) ?? h.store.client;
  const deps = { fga, ...(h.temporal === undefined ? {} : { temporal: h.temporal }), ...opts.apiDeps };
  const apiOptions = { tdb: h.tdb, store: h.store, identity, env: h.env, deps };
  h.api = await startTestApi(apiOptions);
  let apiUp = true;
  teardown.add(() => (apiUp ? h.api.close() : undefined));
  h.restartApi = async (whileDown) => {
    const port = Number(new URL(h.api.url).port);
    apiUp = false;
    await h.api.close();
    try {
      await whileDown?.();
    } finally {
      h.api = await startTestApi({ ...apiOptions, port });
      apiUp = true;
    }
    return h.api;
  };
  h.config = { ...h.api.config, api: { ...h.api.config.api, publicUrl: h.api.url } };
}

/** The worker, through the gateways when there are any. */
async function startWorkerPart({ h, teardown, opts }: Ctx, withWorker: boolean): Promise<void> {
  const worker = workerClients(h.config, h.store, h.gateways, teardown);
  if (worker.s3 !== undefined) h.workerS3 = worker.s3;
  if (h.gateways.fga !== undefined) h.workerFga = worker.fga;
  if (!withWorker) return;
  // the outbox wake only where crawls run: a worker-only harness (reconcile, outbox) looks at queued rows
  h.tw = await startTestWorker({
    config: worker.config,
    db: h.tdb.db,
    fga: worker.fga,
    outboxWake: opts.crawls !== undefined,
    ...(worker.s3 ? { s3: worker.s3 } : {}),
  });
  // stopped first: it ends the workflows still running on its queue
  teardown.add(() => h.tw.stop());
}

/** The helpers that need every part up: as, restartFlow, endRunning, close. */
function addHelpers({ opts, h, teardown }: Ctx, newFlow: NewFlow): void {
  h.as = async (subject, orgs) => {
    const auth = h.issuer === undefined ? devHeaders(subject, orgs) : await h.issuer.auth(subject, orgs);
    return { ...auth, 'content-type': 'application/json' };
  };
  h.restartFlow = async () => {
    if (h.flow === undefined) throw new Error('restartFlow needs crawls: "flow"');
    const port = h.flow.port;
    await h.flow.kill();
    h.flow = await newFlow(port);
    return h.flow;
  };
  const endCrawls = async () => {
    if (h.hook !== undefined) h.hook.relay = undefined;
    if (h.tw === undefined) return;
    await endRunningCrawls(h.tdb.db, h.tw.client);
    await h.flow?.idle();
    h.flow?.setKnobs(opts.flow?.knobs ?? {});
  };
  h.endRunning = async () => {
    // a failed test must not leave the next one without its services
    await restartStoppedGateways(h.gateways);
    await endCrawls();
  };
  h.close = async () => {
    await endCrawls().catch(() => undefined);
    await teardown.run();
  };
}

async function startAll(ctx: Ctx): Promise<void> {
  const { opts, h, teardown } = ctx;
  await startIndependent(opts, h, teardown);
  ctx.identity = h.issuer === undefined ? 'dev' : { oidc: { url: h.issuer.url } };
  const newFlow = flowStarter(ctx);
  addStarters(ctx, newFlow);
  if (opts.crawls === 'flow') {
    h.flow = await newFlow(0);
    teardown.add(() => h.flow.close());
  }
  const withWorker = opts.crawls !== undefined || opts.worker === true;
  h.env = harnessEnv(ctx, withWorker);
  if (withWorker || opts.temporal === true) h.temporal = await connectTemporal(testApiConfig({ tdb: h.tdb, store: h.store, env: h.env }), teardown);
  if (opts.api === false) h.config = testApiConfig({ tdb: h.tdb, store: h.store, identity: ctx.identity, env: h.env });
  else await startApiPart(ctx);
  const s3 = createS3(h.config.s3);
  teardown.add(() => s3.destroy());
  Object.assign(h, { s3, bucket: h.config.s3.bucket });
  await startWorkerPart(ctx, withWorker);
  for (const [subject, relation, org] of opts.grants ?? []) await grant(h.store.client, subject, relation, org);
  addHelpers(ctx, newFlow);
}

/** Starts what `opts` asks for; `h` (useHarness's object) is filled in as the parts come up. */
export async function startHarness<O extends HarnessOptions = Record<never, never>>(opts: O = {} as O, h = {} as Harness<O>): Promise<Harness<O>> {
  const teardown = new Teardown();
  const token = opts.env?.CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN ?? WEBHOOK_TOKEN;
  try {
    await startAll({ opts, h: h as unknown as Parts, teardown, token, identity: 'dev' });
    return h;
  } catch (err) {
    await teardown.run().catch(() => undefined);
    throw err;
  }
}

/**
 * The harness for one test file: started before its tests, closed after them, and (with crawls
 * or gateways) no crawl left running and no gateway down between two tests. The returned object
 * is filled in by beforeAll. `opts` may be a function, called in beforeAll, when the options
 * depend on servers the file starts first.
 */
export function useHarness<O extends HarnessOptions = Record<never, never>>(opts: O | (() => Promise<O>) = {} as O): Harness<O> {
  const h = {} as Harness<O>;
  let resetEach = false;
  beforeAll(async () => {
    const resolved = typeof opts === 'function' ? await opts() : opts;
    resetEach = resolved.crawls !== undefined || resolved.gateways !== undefined;
    await startHarness(resolved, h);
  });
  afterEach(async () => {
    if (resetEach) await h.endRunning();
  });
  afterAll(async () => {
    await (h as Partial<HarnessCore>).close?.();
  });
  return h;
}
