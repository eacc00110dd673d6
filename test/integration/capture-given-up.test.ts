// A capture Temporal has given up on stops where it is. A worker that is alive but was not heard
// within the heartbeat timeout (or whose slice was cancelled) learns it on its next heartbeat, as
// the activity's cancellation; by then the slice has handed the page to another worker, which
// visits the host and writes the same keys. So the one given up must not go on visiting, nor
// upload. capturePage runs here in Temporal's mock activity context (the cancellation is the one
// thing staged: its reason as the SDK gives it after a heartbeat timeout), with the real Chromium,
// the guarded fetcher, robots.txt, a test site and the capture's write-only S3 identity.
import { randomUUID } from 'node:crypto';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { CancelledFailure } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddressPolicy } from '../../src/domain/address-policy.ts';
import { createCaptureActivities } from '../../src/flow/activities/capture-page.ts';
import type { CapturePageInput } from '../../src/flow/activities/types.ts';
import { CaptureBrowser } from '../../src/flow/browser/launch.ts';
import { createGuardedFetcher } from '../../src/flow/fetch.ts';
import { RobotsCache, fetchRobotsTxt } from '../../src/flow/robots-cache.ts';
import { createCaptureS3 } from '../../src/flow/s3.ts';
import { s3Store } from '../../src/flow/store.ts';
import { CAPTURE_SOFTWARE, CAPTURE_USER_AGENT } from '../../src/flow/version.ts';
import { createS3 } from '../../src/s3/client.ts';
import { testConfig } from '../support/config.ts';
import { eventually } from '../support/crawls.ts';
import { captureIdentity } from '../support/flow.ts';
import { startSite, type Site } from '../support/site.ts';

const SLOW_MS = 20_000;

let site: Site;
let browser: CaptureBrowser;
let captureS3: S3Client;
let adminS3: S3Client;
let bucket: string;
let activities: ReturnType<typeof createCaptureActivities>;
// the slice's signals (hostDone) go to Temporal, to a workflow that is not there
let connection: Connection;
let client: Client;

beforeAll(async () => {
  const config = testConfig();
  bucket = config.s3.bucket;
  site = await startSite({
    hosts: {
      g: { pages: { '/slow': { body: '<title>Slow</title><p>at last</p>', delayMs: SLOW_MS }, '/soon': '<title>Soon</title>' } },
      // a host of its own for the wait, so its robots.txt is not cached yet
      w: { pages: { '/later': '<title>Later</title>' } },
    },
  });
  browser = new CaptureBrowser();
  captureS3 = createCaptureS3({ endpoint: config.s3.endpoint, region: config.s3.region, bucket, ...captureIdentity() });
  adminS3 = createS3(config.s3);
  const fetcher = createGuardedFetcher(createAddressPolicy(config.capture.allow, config.capture.deniedPorts));
  connection = await Connection.connect({ address: config.temporal.address });
  client = new Client({ connection, namespace: config.temporal.namespace });
  activities = createCaptureActivities({
    browser,
    fetcher,
    robots: new RobotsCache((url) => fetchRobotsTxt(fetcher, url, CAPTURE_USER_AGENT), 60_000),
    store: s3Store(captureS3, bucket),
    userAgent: CAPTURE_USER_AGENT,
    software: CAPTURE_SOFTWARE,
    log: () => {},
  });
});

afterAll(async () => {
  await browser?.close();
  captureS3?.destroy();
  adminS3?.destroy();
  await site?.close();
  await connection?.close();
});

function captureInput(url: string, over: Partial<CapturePageInput> = {}): CapturePageInput {
  const crawlId = randomUUID();
  return {
    crawlId,
    depth: 0,
    index: 0,
    attempt: 1,
    url,
    follow: true,
    formats: ['wacz', 'links'],
    signing: false,
    prefix: `crawls/${crawlId}/0/`,
    knobs: { deadlineMs: 60_000 },
    delayMs: 0,
    startBy: Date.now() + 120_000,
    finishBy: Date.now() + 120_000,
    ...over,
  };
}

/** Every key the capture's level prefix holds, read with the ledger's own S3 identity. */
async function keysUnder(prefix: string): Promise<string[]> {
  const r = await adminS3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (r.Contents ?? []).map((o) => o.Key!);
}

/** capturePage in a mock activity context of its own, and the means to give it up as Temporal does after a heartbeat timeout. */
function runCapture(input: CapturePageInput): { result: Promise<unknown>; giveUp(): void } {
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId: `slice-${input.crawlId}`, runId: randomUUID() } }, { client });
  const result = env.run(activities.capturePage, input);
  return { result, giveUp: () => env.cancel('TIMED_OUT') };
}

describe('a capture Temporal has given up on', () => {
  it(
    'mid-visit: the visit is torn down (the site sees the browser go away), the attempt ends cancelled, nothing is uploaded',
    { timeout: 60_000 },
    async () => {
      const input = captureInput(site.url('g', '/slow'));
      const capture = runCapture(input);
      // robots.txt answered, and a request in flight: the page's own
      await eventually(
        async () => (site.log.some((r) => r.path === '/robots.txt') && site.inFlight > 0 ? true : undefined),
        20_000,
        'the browser asking for /slow',
      );
      capture.giveUp();
      await expect(capture.result).rejects.toBeInstanceOf(CancelledFailure);
      const slow = await eventually(async () => site.pageRequests('g').find((r) => r.path === '/slow'), 20_000, 'the /slow request to end');
      expect(slow.aborted).toBe(true);
      expect(slow.finishedAt - slow.startedAt).toBeLessThan(SLOW_MS);
      expect(await keysUnder(input.prefix)).toEqual([]);
    },
  );

  it('while it waits for the host to be ready: it ends cancelled without a request for the page', { timeout: 60_000 }, async () => {
    // the host's last capture just finished and its spacing is a minute
    const input = captureInput(site.url('w', '/later'), { lastFinishedAt: Date.now(), delayMs: 60_000 });
    const capture = runCapture(input);
    // robots.txt is asked for before the wait
    await eventually(async () => site.log.find((r) => r.name === 'w' && r.path === '/robots.txt'), 20_000, 'robots.txt asked for');
    capture.giveUp();
    await expect(capture.result).rejects.toBeInstanceOf(CancelledFailure);
    expect(site.pageRequests('w')).toEqual([]);
    expect(await keysUnder(input.prefix)).toEqual([]);
  });

  it('not given up, the same capture is visited and uploaded (what the two above leave out)', { timeout: 60_000 }, async () => {
    const input = captureInput(site.url('g', '/soon'));
    const capture = runCapture(input);
    await expect(capture.result).resolves.toMatchObject({ kind: 'visited', status: 'captured', manifest: true });
    expect((await keysUnder(input.prefix)).some((k) => k.endsWith('.result.json'))).toBe(true);
  });
});
