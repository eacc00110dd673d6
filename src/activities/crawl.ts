// The crawl workflow's activities: every bit of I/O it does. Each one is safe to retry.
import { ApplicationFailure, log } from '@temporalio/activity';
import type { OpenFgaClient } from '@openfga/sdk';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config/env.ts';
import type { Db } from '../db/connect.ts';
import type { CaptureFormat } from '../config/env.ts';
import type { DispatchBody } from '../domain/contract.ts';
import { computeNotBefore, readsLinks, type StopReason } from '../domain/crawl.ts';
import { artifactPrefix } from '../domain/level-dispatch.ts';
import { deliverTuples as deliverOutbox, type DrainResult } from '../fga/outbox.ts';
import { admitLevel as admit, AdmissionError, type AdmitLevelResult } from '../ledger/admit-level.ts';
import { createObjectReader } from '../ledger/object-reader.ts';
import { createAddressPolicy } from '../domain/address-policy.ts';
import { finishCrawlRow, getCrawl, markDispatched } from '../store/crawls.ts';
import { lastFinishByHost, levelPages } from '../store/pages.ts';
import { hostPacing, recordDispatch } from '../store/level-dispatches.ts';
import { capabilityHash, mintCapability } from '../ledger/capability.ts';
import { NON_RETRYABLE } from '../../temporal.config.ts';

export interface ActivityDeps {
  config: Config;
  db: Db;
  s3: S3Client;
  fga: OpenFgaClient;
  fetch?: typeof fetch;
}

export interface BeginResult {
  /** false: no running row for this crawl — the workflow exits without touching anything */
  running: boolean;
  orgId: string | null;
  maxDepth: number;
}

export interface DispatchResult {
  depth: number;
  pages: number;
  follow: number;
  hosts: number;
  /** the level's deadline as sent (ms since the epoch): no re-report is admitted past it
   * (absent in histories recorded before it existed) */
  deadline?: number;
}

export interface DispatchInput {
  crawlId: string;
  depth: number;
  /** how long the level may take (the workflow's level timeout); default the configured one */
  levelTimeoutSeconds?: number;
}

export interface FinishInput {
  crawlId: string;
  state: 'succeeded' | 'failed';
  stopReason: StopReason;
  failure?: string | null;
}

export function reportUrl(publicUrl: string, crawlId: string, depth: number): string {
  return `${publicUrl.replace(/\/+$/, '')}/api/crawls/${crawlId}/levels/${depth}`;
}

export function createCrawlActivities(deps: ActivityDeps) {
  const { config, db } = deps;
  const doFetch = deps.fetch ?? fetch;
  const reader = createObjectReader(config.s3);

  return {
    /** The workflow's first step: is there a running row for it? No row, no crawl. */
    async beginCrawl(input: { crawlId: string }): Promise<BeginResult> {
      const crawl = await getCrawl(db, input.crawlId);
      if (crawl === undefined || crawl.state !== 'running') return { running: false, orgId: crawl?.org_id ?? null, maxDepth: crawl?.max_depth ?? 0 };
      return { running: true, orgId: crawl.org_id, maxDepth: crawl.max_depth };
    },

    /**
     * POSTs one level to the capture flow (the webhook contract). The level is recorded as
     * dispatched before the POST, so a report that beats the response is accepted.
     */
    async dispatchLevel(input: DispatchInput): Promise<DispatchResult> {
      const hook = config.crawl.webhook;
      if (hook === undefined) throw ApplicationFailure.nonRetryable('crawl webhook is not configured', NON_RETRYABLE.dispatchRejected);
      const crawl = await getCrawl(db, input.crawlId);
      if (crawl === undefined) throw ApplicationFailure.nonRetryable(`crawl ${input.crawlId} does not exist`, NON_RETRYABLE.noCrawl);
      // a row finished by hand (or by the API's dead-row recovery) is not dispatched again
      if (crawl.state !== 'running') throw ApplicationFailure.nonRetryable(`crawl ${input.crawlId} is ${crawl.state}, not running`, NON_RETRYABLE.noCrawl);
      const pages = await levelPages(db, input.crawlId, input.depth);
      const hosts = [...new Set(pages.map((p) => p.host))];
      // the last finish and the delay the flow kept (Crawl-delay) per host, as the ledger recorded
      // them: a flow restarted since has forgotten both
      const [finishes, recorded] = await Promise.all([lastFinishByHost(db, input.crawlId, hosts), hostPacing(db, input.crawlId, hosts)]);
      for (const [host, h] of recorded) {
        const seen = finishes.get(host);
        if (h.lastFinishedAt !== null && (seen === undefined || h.lastFinishedAt > seen)) finishes.set(host, h.lastFinishedAt);
      }
      const notBefore = computeNotBefore(finishes, crawl.per_host_delay_ms, hosts, new Map([...recorded].map(([host, h]) => [host, h.delayMs])));
      // A fresh capability per attempt; the earlier ones stay valid for the level, since an attempt
      // whose answer was lost may still be what the flow is working on.
      const capability = mintCapability();
      const prefix = artifactPrefix(crawl.id, input.depth);
      const deadline = new Date(Date.now() + (input.levelTimeoutSeconds ?? config.crawl.levelTimeoutSeconds) * 1000);
      const body: DispatchBody = {
        crawlId: crawl.id,
        depth: input.depth,
        orgId: crawl.org_id,
        reportUrl: reportUrl(config.api.publicUrl, crawl.id, input.depth),
        heartbeatUrl: `${reportUrl(config.api.publicUrl, crawl.id, input.depth)}/heartbeat`,
        formats: crawl.formats as CaptureFormat[],
        signing: crawl.signing,
        perHostDelayMs: crawl.per_host_delay_ms,
        hostParallelism: crawl.host_parallelism,
        behaviors: { seconds: crawl.behaviors_seconds, siteSpecific: crawl.site_behaviors },
        ...(crawl.qa ? { qa: true } : {}),
        notBefore,
        pages: pages.map((p) => ({ url: p.url, follow: readsLinks(p.action, input.depth, crawl.max_depth) })),
        capability,
        artifactPrefix: prefix,
        deadline: deadline.toISOString(),
      };
      await recordDispatch(db, { crawlId: crawl.id, depth: input.depth, capabilityHash: capabilityHash(capability), artifactPrefix: prefix, deadline });
      await markDispatched(db, crawl.id, input.depth);
      let res: Response;
      try {
        res = await doFetch(hook.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${hook.token}` },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        throw new Error(`webhook ${hook.url} unreachable: ${(err as Error).message}`);
      }
      const text = await res.text().catch(() => '');
      if (!res.ok) {
        const msg = `webhook ${hook.url} answered ${res.status}: ${text.slice(0, 300)}`;
        // 401/403/400: the flow refuses this request as it is; sending it again cannot help.
        if ([400, 401, 403, 404, 422].includes(res.status)) throw ApplicationFailure.nonRetryable(msg, NON_RETRYABLE.dispatchRejected);
        throw new Error(msg);
      }
      log.info('level dispatched', { crawlId: crawl.id, depth: input.depth, pages: pages.length });
      return { depth: input.depth, pages: pages.length, follow: body.pages.filter((p) => p.follow).length, hosts: hosts.length, deadline: deadline.getTime() };
    },

    /** Admits the stored report of a level into the ledger. */
    async admitLevel(input: { crawlId: string; depth: number; reportId: string; expand: boolean }): Promise<AdmitLevelResult> {
      try {
        return await admit(
          {
            db,
            s3: deps.s3,
            reader,
            bucket: config.s3.bucket,
            log: { warn: (msg, meta) => log.warn(msg, meta) },
            policy: createAddressPolicy(config.capture.allow, config.capture.deniedPorts),
          },
          { crawlId: input.crawlId, depth: input.depth, expand: input.expand },
        );
      } catch (err) {
        if (err instanceof AdmissionError) throw ApplicationFailure.nonRetryable(err.message, NON_RETRYABLE.admission);
        throw err;
      }
    },

    /** Delivers queued tuples to OpenFGA now: the outbox-drain workflow's, and the crawl
     * workflow's in histories from before `outbox-leaves-crawl` (src/worker/outbox-wake.ts
     * delivers a crawl's tuples now). Throws while OpenFGA is unreachable (rows stay queued). */
    async deliverTuples(): Promise<DrainResult> {
      return deliverOutbox(db, deps.fga);
    },

    /** Ends the row. Only a running row changes, so retrying (or finishing twice) is harmless. */
    async finishCrawl(input: FinishInput): Promise<{ finished: boolean }> {
      const finished = await finishCrawlRow(db, input.crawlId, { state: input.state, stopReason: input.stopReason, failure: input.failure ?? null });
      log.info('crawl finished', { ...input, finished });
      return { finished };
    },
  };
}

export type CrawlActivities = ReturnType<typeof createCrawlActivities>;
