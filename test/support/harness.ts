// The one integration harness: a test file says which real parts it needs and gets them started
// in dependency order (independent ones at once), each on its own database, OpenFGA store, task
// queue and port, and torn down in reverse order, whatever failed to start.
//
//   const h = useHarness({ crawls: 'stub', grants: [['alice', 'submitter', 'acme']] });
//   it('…', async () => { await fetch(`${h.api.url}/api/crawls`, …); h.hook.dispatches … });
//
// Parts: always a test database and an OpenFGA store; the API unless `api: false`; `issuer` for
// real JWTs (the API then trusts it instead of the dev identity); `worker` adds Temporal and a
// worker on a task queue of its own; `crawls` adds both and the webhook: a stub that records
// dispatches ('stub') or the reference capture flow ('flow', with a test site). With crawls, every
// test ends with no crawl running (afterEach), so no test depends on what an earlier one left.
import type { S3Client } from '@aws-sdk/client-s3';
import type { OpenFgaClient } from '@openfga/sdk';
import { Client, Connection } from '@temporalio/client';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Config } from '../../src/config/env.ts';
import { startFlow, type Flow, type FlowOptions } from '../../src/flow/server.ts';
import type { Resolver } from '../../src/flow/fetch.ts';
import { createS3 } from '../../src/s3/client.ts';
import { devHeaders, startTestApi, startTestIssuer, testApiConfig, type TestApi, type TestApiOptions, type TestIssuer } from './api.ts';
import { endRunningCrawls, grant, startWebhookStub, type WebhookStub } from './crawls.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { createTestStore, type TestStore } from './fga.ts';
import { newFlowQueues, testFlowOptions, type FlowQueues } from './flow.ts';
import { startSite, type Site, type SiteHostSpec } from './site.ts';
import { startTestWorker, uniqueTaskQueue, type TestWorker } from './temporal.ts';

export type Grant = [subject: string, relation: 'submitter' | 'admin', orgId: string];

export interface HarnessOptions {
  /** a dev issuer whose JWTs the API trusts (default: the dev identity headers) */
  issuer?: boolean;
  /** Temporal, a worker and the webhook: a recording stub, or the reference capture flow */
  crawls?: 'stub' | 'flow';
  /** Temporal and a worker without a webhook (reconcile, outbox) */
  worker?: boolean;
  /** false: no API (the worker then runs with the plain test configuration) */
  api?: false;
  /** the test site (with crawls: 'flow', what the flow captures) */
  site?: { hosts: Record<string, SiteHostSpec> };
  /** the reference flow's options (crawls: 'flow') */
  flow?: Partial<Pick<FlowOptions, 'heartbeatIntervalMs' | 'knobs' | 'log'>> & { resolve?: Resolver };
  /** environment overrides for the API's and worker's configuration */
  env?: Record<string, string>;
  /** wraps the OpenFGA client the API is given (e.g. to count its calls) */
  apiFga?: (client: OpenFgaClient) => OpenFgaClient;
  /** more of the API's deps */
  apiDeps?: TestApiOptions['deps'];
  /** tuples written once everything is up */
  grants?: Grant[];
}

export interface Harness {
  tdb: TestDatabase;
  store: TestStore;
  api: TestApi;
  /** the environment the API was started with (to start another API like it) */
  env: Record<string, string>;
  /** the configuration the worker runs with (the API's, with its real public URL, when there is one) */
  config: Config;
  s3: S3Client;
  bucket: string;
  /** with `issuer` */
  issuer: TestIssuer;
  /** with crawls or worker */
  temporal: Client;
  tw: TestWorker;
  /** with crawls: 'stub' */
  hook: WebhookStub;
  /** with crawls: 'flow' (replaced by restartFlow) */
  flow: Flow;
  /** with `site` */
  site: Site;
  /** JSON headers for `subject` in `orgs`: a JWT with `issuer`, dev headers without */
  as(subject: string, orgs: string[]): Promise<Record<string, string>>;
  /** stops the API, runs `whileDown`, then starts an API like it on the same port (h.api) */
  restartApi(whileDown?: () => Promise<void>): Promise<TestApi>;
  /** the task queues of the harness's flow (crawls: 'flow'): another capture worker may join them */
  flowQueues: FlowQueues;
  /** with crawls: 'flow': kills the flow (Flow.kill) and starts a new one on its port */
  restartFlow(): Promise<Flow>;
  /** a reference capture flow of the test's own (closed with the harness), e.g. behind the stub's relay */
  startFlow(options?: Partial<Omit<FlowOptions, 'config'>> & { resolve?: Resolver }): Promise<Flow>;
  /** another dev issuer (closed with the harness), one the API does not trust */
  startIssuer(): Promise<TestIssuer>;
  /** another API on the same database and store (closed with the harness, or by the test) */
  startApi(options?: Omit<TestApiOptions, 'tdb' | 'store'>): Promise<TestApi>;
  /** ends running crawls (workflow terminated, row failed), waits for the flow to be idle and resets its knobs and the stub's relay */
  endRunning(): Promise<void>;
  close(): Promise<void>;
}

const WEBHOOK_TOKEN = 'harness-webhook-token';

/** Undoes what was started, newest first; every step runs even when an earlier one fails. */
class Teardown {
  private steps: (() => unknown)[] = [];
  add(step: () => unknown): void {
    this.steps.push(step);
  }
  async run(): Promise<void> {
    const failures: unknown[] = [];
    for (const step of this.steps.reverse()) {
      try {
        await step();
      } catch (err) {
        failures.push(err);
      }
    }
    this.steps = [];
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} teardown step(s) failed`);
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn());
}

/** Starts what `opts` asks for; `h` (useHarness's object) is filled in as the parts come up. */
export async function startHarness(opts: HarnessOptions = {}, h = {} as Harness): Promise<Harness> {
  const teardown = new Teardown();
  const token = opts.env?.CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN ?? WEBHOOK_TOKEN;
  try {
    const [tdb, store, issuer, hook] = await Promise.all([
      createTestDatabase().then((t) => (teardown.add(() => t.drop()), t)),
      createTestStore(),
      opts.issuer ? startTestIssuer().then((i) => (teardown.add(() => i.close()), i)) : undefined,
      opts.crawls === 'stub' ? startWebhookStub().then((s) => (teardown.add(() => s.close()), s)) : undefined,
    ]);
    Object.assign(h, { tdb, store, issuer, hook });
    if (opts.site) {
      h.site = await startSite({ hosts: opts.site.hosts });
      teardown.add(() => h.site.close());
    }
    const identity = issuer === undefined ? ('dev' as const) : { oidc: { url: issuer.url } };

    let env: Record<string, string> = { ...opts.env };
    // the flow holds its own address policy: a test's allowlist applies to it as to the API
    const flowAllow = opts.env?.CAPTURE_LEDGER_CAPTURE_ALLOW;
    const flowConfig = testApiConfig({
      tdb,
      store,
      identity,
      env: { CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: token, ...(flowAllow !== undefined ? { CAPTURE_LEDGER_CAPTURE_ALLOW: flowAllow } : {}) },
    });
    // the harness's flow keeps its queues across restartFlow: the new one takes up the old one's levels
    const queues = newFlowQueues();
    h.flowQueues = queues;
    const newFlow = (port: number, options: Partial<FlowOptions> & { resolve?: Resolver } = {}, own = false) => {
      const { resolve, ...rest } = { ...opts.flow, ...options };
      const base = testFlowOptions(flowConfig, { webhookToken: token, ...(own ? {} : { queues }), ...(resolve ? { resolve } : {}) });
      return startFlow({ ...base, port, host: '127.0.0.1', ...rest });
    };
    h.startFlow = async (options) => {
      const flow = await newFlow(0, options, true);
      // a test may close it itself (a flow gone mid-crawl); the harness closes it only if not
      const close = once(() => flow.close());
      teardown.add(close);
      return { ...flow, close };
    };
    h.startApi = async (options) => {
      const api = await startTestApi({ tdb, store, ...options });
      const close = once(() => api.close());
      teardown.add(close);
      return { ...api, close };
    };
    h.startIssuer = async () => {
      const extra = await startTestIssuer();
      teardown.add(() => extra.close());
      return extra;
    };
    if (opts.crawls === 'flow') {
      h.flow = await newFlow(0);
      teardown.add(() => h.flow.close());
    }
    const withWorker = opts.crawls !== undefined || opts.worker === true;
    if (withWorker) {
      const webhook: Record<string, string> =
        opts.crawls === undefined
          ? {}
          : { CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: opts.crawls === 'flow' ? h.flow.webhookUrl : hook!.url, CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: token };
      env = { ...webhook, CAPTURE_LEDGER_TEMPORAL_TASK_QUEUE: uniqueTaskQueue('harness'), ...env };
      const { temporal } = testApiConfig({ tdb, store, env });
      const connection = await Connection.connect({ address: temporal.address });
      teardown.add(() => connection.close());
      h.temporal = new Client({ connection, namespace: temporal.namespace });
    }

    h.env = env;
    if (opts.api === false) {
      h.config = testApiConfig({ tdb, store, identity, env });
    } else {
      const fga = opts.apiFga?.(store.client) ?? store.client;
      const apiOptions = { tdb, store, identity, env, deps: { fga, ...(h.temporal === undefined ? {} : { temporal: h.temporal }), ...opts.apiDeps } };
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
    h.s3 = createS3(h.config.s3);
    teardown.add(() => h.s3.destroy());
    h.bucket = h.config.s3.bucket;
    if (withWorker) {
      // the outbox wake only where crawls run: a worker-only harness (reconcile) looks at queued rows
      h.tw = await startTestWorker({ config: h.config, db: tdb.db, fga: store.client, outboxWake: opts.crawls !== undefined });
      // stopped first: it ends the workflows still running on its queue
      teardown.add(() => h.tw.stop());
    }
    for (const [subject, relation, org] of opts.grants ?? []) await grant(store.client, subject, relation, org);

    h.as = async (subject, orgs) => {
      const auth = issuer === undefined ? devHeaders(subject, orgs) : await issuer.auth(subject, orgs);
      return { ...auth, 'content-type': 'application/json' };
    };
    h.restartFlow = async () => {
      if (h.flow === undefined) throw new Error('restartFlow needs crawls: "flow"');
      const port = h.flow.port;
      await h.flow.kill();
      h.flow = await newFlow(port);
      return h.flow;
    };
    h.endRunning = async () => {
      if (hook !== undefined) hook.relay = undefined;
      if (h.tw === undefined) return;
      await endRunningCrawls(tdb.db, h.tw.client);
      await h.flow?.idle();
      h.flow?.setKnobs(opts.flow?.knobs ?? {});
    };
    h.close = async () => {
      await h.endRunning().catch(() => undefined);
      await teardown.run();
    };
    return h;
  } catch (err) {
    await teardown.run().catch(() => undefined);
    throw err;
  }
}

/**
 * The harness for one test file: started before its tests, closed after them, and (with crawls)
 * no crawl left running between two tests. The returned object is filled in by beforeAll. `opts`
 * may be a function, called in beforeAll, when the options depend on servers the file starts first.
 */
export function useHarness(opts: HarnessOptions | (() => Promise<HarnessOptions>) = {}): Harness {
  const h = {} as Harness;
  let crawls = typeof opts === 'function' ? undefined : opts.crawls;
  beforeAll(async () => {
    const resolved = typeof opts === 'function' ? await opts() : opts;
    crawls = resolved.crawls;
    await startHarness(resolved, h);
  });
  afterEach(async () => {
    if (crawls !== undefined) await h.endRunning();
  });
  afterAll(async () => {
    await h.close?.();
  });
  return h;
}
