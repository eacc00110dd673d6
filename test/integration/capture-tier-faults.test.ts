// Issue 25: the capture tier through the outages of its neighbours. The ledger dispatches to a
// receiver of the test's own (behind the stub's relay); pages are captured by a capture worker
// that is not part of the receiver's process, so each side can fail alone:
// - the API away for 90 s while the level's report is due: the report is retried until it lands,
//   the crawl succeeds and every page is fetched once;
// - the receiver (and its flow worker) killed and started again mid-level: the level goes on in
//   Temporal, the crawl succeeds and no page is fetched twice;
// - a capture worker process started with nothing but its own CAPTURE_WORKER_* variables (as the
//   unprivileged capture user when the test runs as root) captures a crawl end to end.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startCaptureWorker } from '../../src/flow/capture-worker/worker.ts';
import { startFlow, type Flow } from '../../src/flow/server.ts';
import { archivedUrls, archiveSoftwares, postCrawl } from '../support/crawl-rows.ts';
import { eventually, waitForCrawlEnd } from '../support/crawls.ts';
import { ROOT } from '../support/env.ts';
import { captureIdentity, newFlowQueues, testCaptureWorkerConfig, testFlowOptions, type FlowQueues } from '../support/flow.ts';
import { useHarness } from '../support/harness.ts';
import { TEST_SITES_ALLOW } from '../support/config.ts';

const ORG = 'acme';
const paths = ['/p1', '/p2', '/p3', '/p4', '/p5', '/p6'];

const h = useHarness({
  issuer: true,
  crawls: 'stub',
  site: {
    hosts: {
      r: {
        pages: {
          '/': `<title>R</title>${paths.map((p) => `<a href="${p}">${p}</a>`).join(' ')}`,
          ...Object.fromEntries(paths.map((p) => [p, `<title>${p}</title><p>page ${p}</p>`])),
        },
      },
    },
  },
  // the ledger never re-dispatches here: what is tested is the flow's own durability
  env: { CAPTURE_LEDGER_LEVEL_LIVENESS_SECONDS: '600', CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '600' },
  grants: [['alice', 'submitter', ORG]],
});

/** A receiver (and flow worker) without a capture worker of its own, on `queues`. */
function receiver(queues: FlowQueues, port = 0, knobs = {}): Promise<Flow> {
  const { capture: _none, ...opts } = testFlowOptions(h.config, { queues });
  return startFlow({ ...opts, port, knobs, heartbeatIntervalMs: 1000 });
}

const startCrawl = async (body: Record<string, unknown>): Promise<string> => postCrawl(h.api.url, await h.as('alice', [ORG]), body);

function fetchedOnce(): void {
  const perPath = new Map<string, number>();
  for (const r of h.site.pageRequests('r')) perPath.set(r.path, (perPath.get(r.path) ?? 0) + 1);
  expect([...perPath.keys()].sort()).toEqual(['/', ...paths].sort());
  expect([...perPath.values()].every((n) => n === 1)).toBe(true);
}

const everyPage = (): string[] => ['/', ...paths].map((p) => h.site.url('r', p)).sort();

describe('the capture tier through outages', () => {
  it('the API stopped for 90 s while a level report is due: the crawl succeeds, every page fetched once', async () => {
    h.site.clearLog();
    const queues = newFlowQueues();
    const flow = await receiver(queues);
    const worker = await startCaptureWorker({ config: testCaptureWorkerConfig(h.config, queues) });
    try {
      h.hook.relay = { to: flow.webhookUrl };
      const crawlId = await startCrawl({ seeds: [h.site.url('r', '/')], maxDepth: 0, perHostDelayMs: 100 });
      await eventually(async () => flow.level(crawlId, 0), 60_000, 'level 0 at the flow');
      await h.restartApi(async () => {
        // the level is captured and its report is tried against nobody, again and again
        await eventually(async () => (flow.level(crawlId, 0)?.state === 'reporting' ? true : undefined), 60_000, 'the level reporting');
        const started = Date.now();
        await new Promise((r) => setTimeout(r, 90_000 - (Date.now() - started)));
      });
      const level = await flow.waitForLevel(crawlId, 0, 60_000);
      expect(level.state).toBe('reported');
      expect(level.outcome!.attempts.length).toBeGreaterThan(3);
      expect(level.outcome!.attempts.at(-1)!.status).toBe(202);
      const row = await waitForCrawlEnd(h.tdb.db, crawlId, 60_000);
      expect(row).toMatchObject({ state: 'succeeded', failure: null });
      expect(await archivedUrls(h.tdb.db, crawlId)).toEqual([h.site.url('r', '/')]);
      expect(h.site.pageRequests('r').map((r) => r.path)).toEqual(['/']);
    } finally {
      await flow.close();
      await worker.shutdown();
    }
  }, 240_000);

  it('the receiver killed and started again mid-level: the crawl succeeds and no page is fetched twice', async () => {
    h.site.clearLog();
    const queues = newFlowQueues();
    let flow = await receiver(queues, 0, { captureDelayMs: 500 });
    const worker = await startCaptureWorker({ config: testCaptureWorkerConfig(h.config, queues) });
    try {
      h.hook.relay = { to: flow.webhookUrl };
      const crawlId = await startCrawl({ seeds: [h.site.url('r', '/')], maxDepth: 1, perHostDelayMs: 300 });
      await eventually(
        async () =>
          Object.values(worker.hostLog.all())
            .flat()
            .filter((c) => c.depth === 1).length >= 2
            ? true
            : undefined,
        90_000,
        'two pages of level 1 captured',
      );
      const port = flow.port;
      await flow.kill();
      // captures go on while no receiver runs; a new one takes the level up where it was
      flow = await receiver(queues, port, { captureDelayMs: 500 });
      const row = await waitForCrawlEnd(h.tdb.db, crawlId, 150_000);
      expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', failure: null });
      expect(await archivedUrls(h.tdb.db, crawlId)).toEqual(everyPage());
      fetchedOnce();
    } finally {
      await flow.close();
      await worker.shutdown();
    }
  }, 240_000);

  it('a capture worker process with only its own variables captures a crawl end to end', async () => {
    h.site.clearLog();
    const queues = newFlowQueues();
    const flow = await receiver(queues);
    const { temporal, s3 } = h.config;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      CAPTURE_WORKER_NAME: 'own-variables-worker',
      CAPTURE_WORKER_TEMPORAL_ADDRESS: temporal.address,
      CAPTURE_WORKER_TEMPORAL_NAMESPACE: temporal.namespace,
      CAPTURE_WORKER_TASK_QUEUE: queues.capture,
      CAPTURE_WORKER_S3_ENDPOINT: s3.endpoint,
      CAPTURE_WORKER_S3_REGION: s3.region,
      CAPTURE_WORKER_S3_BUCKET: s3.bucket,
      CAPTURE_WORKER_S3_ACCESS_KEY_ID: captureIdentity().accessKeyId,
      CAPTURE_WORKER_S3_SECRET_ACCESS_KEY: captureIdentity().secretAccessKey,
      CAPTURE_WORKER_CAPTURE_ALLOW: TEST_SITES_ALLOW,
      CAPTURE_WORKER_SLOTS: '2',
    };
    const node = process.execPath;
    const main = `${ROOT}src/flow/capture-worker/main.ts`;
    // as npm start runs it: a root process drops to the capture user
    const child: ChildProcess =
      process.getuid?.() === 0
        ? spawn('runuser', ['-u', 'capture-ledger-capture', '--', node, main], { env, stdio: ['ignore', 'pipe', 'pipe'] })
        : spawn(node, [main], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      // its own line, not the SDK's "not polling for workflow tasks", which may come first
      const said = await eventually(
        async () => /\(pid (\d+), uid \d+\) polling/.exec(out) ?? undefined,
        60_000,
        `the capture worker polling (it said: ${out})`,
      );
      const pid = Number(said[1]);
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      expect(Number(/^Uid:\s+(\d+)/m.exec(status)?.[1])).not.toBe(0);
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .filter((l) => l !== '');
      expect(environ.filter((l) => l.startsWith('CAPTURE_LEDGER_'))).toEqual([]);

      h.hook.relay = { to: flow.webhookUrl };
      const crawlId = await startCrawl({ seeds: [h.site.url('r', '/')], maxDepth: 1, perHostDelayMs: 50 });
      const row = await waitForCrawlEnd(h.tdb.db, crawlId, 150_000);
      expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', failure: null });
      expect(await archivedUrls(h.tdb.db, crawlId)).toEqual(everyPage());
      const softwares = await archiveSoftwares(h.tdb.db, crawlId);
      expect(softwares.every((name) => name.endsWith('(own-variables-worker)'))).toBe(true);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await flow.close();
    }
  }, 240_000);
});
