// Crawl test helpers: a webhook receiver that records dispatches (for tests that play the
// capture flow's part by hand), manifests written to the real bucket the way a capturer writes
// them, and waits on crawl rows.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { OpenFgaClient } from '@openfga/sdk';
import type { Db } from '../../src/db/connect.ts';
import type { Crawl } from '../../src/db/types.ts';
import { finishCrawlRow } from '../../src/store/crawls.ts';
import { crawlWorkflowId } from '../../temporal.config.ts';
import { CAPABILITY_HEADER, ERROR_TYPE_CANCELLED, type DispatchBody, type Manifest, type PageReport } from '../../src/domain/contract.ts';
import { levelPrefix as prefixOfLevel } from '../../src/domain/level.ts';

export interface ReceivedDispatch {
  body: DispatchBody;
  authorization: string | undefined;
  at: number;
}

export interface WebhookStub {
  url: string;
  dispatches: ReceivedDispatch[];
  /** answer every dispatch with this status from now on (default 202) */
  status: number;
  waitFor(predicate: (d: ReceivedDispatch) => boolean, timeoutMs?: number): Promise<ReceivedDispatch>;
  /** the capability header of the latest dispatch of a level: what a report of it must carry */
  capability(crawlId: string, depth: number): Record<string, string>;
  /**
   * Relay dispatches to a real capture flow's webhook (its answer is the stub's answer), after
   * `hold` resolves for that dispatch: a test can restart the flow between two levels.
   */
  relay: { to: string; hold?: (d: ReceivedDispatch) => Promise<void> } | undefined;
  close(): Promise<void>;
}

/** The capability header a level's report carries, from the dispatch that asked for it. */
export function capabilityHeader(d: Pick<DispatchBody, 'capability'>): Record<string, string> {
  if (d.capability === undefined) throw new Error('the dispatch carried no capability');
  return { [CAPABILITY_HEADER]: d.capability };
}

/** Where the ledger asks a level's captures to be written (writeCapture's prefix: no trailing '/'). */
export function levelPrefix(crawlId: string, depth: number): string {
  return prefixOfLevel(crawlId, depth).replace(/\/$/, '');
}

export async function startWebhookStub(): Promise<WebhookStub> {
  const dispatches: ReceivedDispatch[] = [];
  const waiters: { predicate: (d: ReceivedDispatch) => boolean; resolve: (d: ReceivedDispatch) => void }[] = [];
  const stub = { status: 202, relay: undefined } as WebhookStub;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = stub.status;
      const raw = Buffer.concat(chunks).toString('utf8');
      let d: ReceivedDispatch | undefined;
      if (status < 300) {
        d = { body: JSON.parse(raw) as DispatchBody, authorization: req.headers.authorization, at: Date.now() };
        dispatches.push(d);
        for (const w of [...waiters]) {
          if (w.predicate(d)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(d);
          }
        }
      }
      const relay = stub.relay;
      if (d === undefined || relay === undefined) {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ accepted: status < 300 }));
        return;
      }
      void (async () => {
        await relay.hold?.(d);
        const answer = await fetch(relay.to, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
          body: raw,
        });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
      })().catch((err: unknown) => res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: (err as Error).message })));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(stub, {
    url: `http://127.0.0.1:${port}/crawl`,
    dispatches,
    waitFor(predicate: (d: ReceivedDispatch) => boolean, timeoutMs = 20_000) {
      const found = dispatches.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise<ReceivedDispatch>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no matching dispatch within ${timeoutMs} ms (got ${dispatches.length})`)), timeoutMs);
        waiters.push({ predicate, resolve: (d) => (clearTimeout(t), resolve(d)) });
      });
    },
    capability(crawlId: string, depth: number) {
      const d = [...dispatches].reverse().find((x) => x.body.crawlId === crawlId && x.body.depth === depth);
      if (d === undefined) throw new Error(`level ${crawlId}/${depth} was never dispatched to the stub`);
      return capabilityHeader(d.body);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

export async function putJson(s3: S3Client, bucket: string, key: string, value: unknown): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: JSON.stringify(value), ContentType: 'application/json' }));
}

export interface FakeCapture {
  url: string;
  /** what the capturer itself says (default succeeded) */
  outcome?: 'succeeded' | 'failed' | 'cancelled';
  /** what the flow reports (default: captured when succeeded, else failed) */
  reported?: 'captured' | 'failed';
  /** hrefs of the links artifact (a follow page) */
  links?: { href: string; rel?: string }[];
  finalUrl?: string;
  submittedAt?: Date;
  finishedAt?: Date;
  /** write no manifest at all (the report still names the key) */
  noManifest?: boolean;
}

/**
 * Writes a capture the way the capturer does — a manifest at `<prefix>/<taskId>.result.json`
 * (and a links artifact for follow pages) — and returns the page as the flow would report it.
 * No WACZ bytes are written: admission reads the manifest, not the archive.
 */
export async function writeCapture(
  s3: S3Client,
  bucket: string,
  prefix: string,
  c: FakeCapture,
): Promise<PageReport & { taskId: string; manifestKey: string }> {
  const taskId = randomUUID();
  const base = `${prefix}/${taskId}`;
  const outcome = c.outcome ?? 'succeeded';
  const finishedAt = c.finishedAt ?? new Date();
  const submittedAt = c.submittedAt ?? new Date(finishedAt.getTime() - 100);
  const artifacts: Manifest['artifacts'] = [];
  if (outcome === 'succeeded') {
    artifacts.push({ format: 'wacz', bucket, key: `${base}.wacz`, sha256: 'f'.repeat(64), size: 1234 });
    if (c.links !== undefined) {
      await putJson(s3, bucket, `${base}.links.json`, { url: c.url, finalUrl: c.finalUrl ?? c.url, links: c.links });
      artifacts.push({ format: 'links', bucket, key: `${base}.links.json`, sha256: 'e'.repeat(64), size: 10 });
    }
  }
  const manifest: Manifest = {
    taskId,
    url: c.url,
    finalUrl: c.finalUrl ?? c.url,
    status: outcome === 'succeeded' ? 'succeeded' : 'failed',
    ...(outcome === 'cancelled'
      ? { error: { type: ERROR_TYPE_CANCELLED, message: 'deadline exceeded' } }
      : outcome === 'failed'
        ? { error: { type: 'ERROR_TYPE_NAVIGATION', message: 'boom' } }
        : {}),
    artifacts,
    software: 'test-capturer',
    startedAt: submittedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
  };
  if (!c.noManifest) await putJson(s3, bucket, `${base}.result.json`, manifest);
  return {
    url: c.url,
    status: c.reported ?? (outcome === 'succeeded' ? 'captured' : 'failed'),
    taskId,
    manifestKey: `${base}.result.json`,
    finalUrl: c.finalUrl ?? c.url,
    submittedAt: submittedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
  };
}

export async function grant(fga: OpenFgaClient, subject: string, relation: 'submitter' | 'admin', orgId: string): Promise<void> {
  await fga.write({ writes: [{ user: `user:${subject}`, relation, object: `organization:${orgId}` }] });
}

/** After a test that failed mid-crawl: terminate every running crawl's workflow and finish its row. */
export async function endRunningCrawls(
  db: Db,
  temporal: { workflow: { getHandle(id: string): { terminate(reason: string): Promise<unknown> } } },
): Promise<void> {
  const running = await db.selectFrom('crawls').select('id').where('state', '=', 'running').execute();
  for (const r of running) {
    await temporal.workflow
      .getHandle(crawlWorkflowId(r.id))
      .terminate('test cleanup')
      .catch(() => undefined);
    await finishCrawlRow(db, r.id, { state: 'failed', stopReason: 'failed', failure: 'test cleanup' });
  }
}

/** Polls the crawl row until it is no longer running. */
export async function waitForCrawlEnd(db: Db, crawlId: string, timeoutMs = 30_000): Promise<Crawl> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await db.selectFrom('crawls').selectAll().where('id', '=', crawlId).executeTakeFirst();
    if (row !== undefined && row.state !== 'running') return row;
    if (Date.now() > deadline) throw new Error(`crawl ${crawlId} still ${row?.state ?? 'missing'} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls until `fn` returns something other than undefined. */
export async function eventually<T>(fn: () => Promise<T | undefined>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
