// The whole crawl machinery for one test file, for real: a test database and OpenFGA store, the
// dev issuer (JWTs), a multi-host test site, the reference capture flow (Chromium), the API and
// a Temporal worker on a task queue of its own. The flow can be killed mid-level and another
// started on the same port, as a restarted process would be.
import { Client, Connection } from '@temporalio/client';
import { crawlWorkflowId } from '../../temporal.config.ts';
import { startFlow, type Flow, type FlowOptions } from '../../src/flow/server.ts';
import { finishCrawlRow } from '../../src/store/crawls.ts';
import { startTestApi, startTestIssuer, testApiConfig, type TestApi, type TestIssuer } from './api.ts';
import { grant } from './crawls.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { createTestStore, type TestStore } from './fga.ts';
import { startSite, type Site, type SiteHostSpec } from './site.ts';
import { startTestWorker, uniqueTaskQueue, type TestWorker } from './temporal.ts';

export interface LiveCrawlStack {
  tdb: TestDatabase;
  store: TestStore;
  issuer: TestIssuer;
  site: Site;
  flow: Flow;
  api: TestApi;
  tw: TestWorker;
  /** JSON headers with a JWT for `subject` in `orgs` */
  as(subject: string, orgs: string[]): Promise<Record<string, string>>;
  /** kills the flow (Flow.kill) and starts a new one on its port */
  restartFlow(): Promise<Flow>;
  /** ends running crawls (workflow terminated, row failed) so the next test may start one */
  endRunning(): Promise<void>;
  close(): Promise<void>;
}

export async function startLiveCrawlStack(opts: {
  hosts: Record<string, SiteHostSpec>;
  /** submitter granted on this organization as `alice` */
  org: string;
  env?: Record<string, string>;
  flow?: Partial<Pick<FlowOptions, 'heartbeatIntervalMs' | 'knobs' | 'resolve' | 'log'>>;
}): Promise<LiveCrawlStack> {
  const [tdb, store, issuer] = await Promise.all([createTestDatabase(), createTestStore(), startTestIssuer()]);
  const site = await startSite({ hosts: opts.hosts });
  const identity = { oidc: { url: issuer.url } } as const;
  const token = 'live-crawl-token';
  const flowConfig = testApiConfig({ tdb, store, identity, env: { CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: token } });
  const newFlow = (port: number) => startFlow({ config: flowConfig, port, host: '127.0.0.1', ...opts.flow });
  let flow = await newFlow(0);
  const env = {
    CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: flow.webhookUrl,
    CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: token,
    CAPTURE_LEDGER_TEMPORAL_TASK_QUEUE: uniqueTaskQueue('live-crawl'),
    ...opts.env,
  };
  const base = testApiConfig({ tdb, store, identity, env });
  const connection = await Connection.connect({ address: base.temporal.address });
  const api = await startTestApi({ tdb, store, identity, env, deps: { temporal: new Client({ connection, namespace: base.temporal.namespace }) } });
  const tw = await startTestWorker({ config: { ...api.config, api: { ...api.config.api, publicUrl: api.url } }, db: tdb.db, fga: store.client });
  await grant(store.client, 'alice', 'submitter', opts.org);

  const stack: LiveCrawlStack = {
    tdb,
    store,
    issuer,
    site,
    get flow() {
      return flow;
    },
    api,
    tw,
    async as(subject, orgs) {
      return { ...(await issuer.auth(subject, orgs)), 'content-type': 'application/json' };
    },
    async restartFlow() {
      const port = flow.port;
      await flow.kill();
      flow = await newFlow(port);
      return flow;
    },
    async endRunning() {
      for (const r of await tdb.db.selectFrom('crawls').select('id').where('state', '=', 'running').execute()) {
        await tw.client.workflow.getHandle(crawlWorkflowId(r.id)).terminate('test cleanup').catch(() => undefined);
        await finishCrawlRow(tdb.db, r.id, { state: 'failed', stopReason: 'failed', failure: 'test cleanup' });
      }
      await flow.idle();
    },
    async close() {
      await stack.endRunning().catch(() => undefined);
      await tw.stop();
      await api.close();
      await connection.close();
      await flow.close();
      await site.close();
      await issuer.close();
      await tdb.drop();
    },
  };
  return stack;
}
