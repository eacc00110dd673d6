// The crawl workflow's activities: every bit of I/O it does. Each one is safe to retry. Each is
// made by a factory taking only the dependencies it uses; createCrawlActivities puts them together.
import { log } from '@temporalio/activity';
import type { OpenFgaClient } from '@openfga/sdk';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config/env.ts';
import type { Db } from '../db/connect.ts';
import type { StopReason } from '../domain/crawl.ts';
import { deliverTuples as deliverOutbox, type DrainResult } from '../fga/outbox.ts';
import { finishCrawlRow, getCrawl } from '../store/crawls.ts';
import type { ObjectReader } from '../s3/object-reader.ts';
import { createAdmitLevel } from './admit-level.ts';
import { createDispatchLevel } from './dispatch-level.ts';

export interface ActivityDeps {
  config: Config;
  db: Db;
  s3: S3Client;
  fga: OpenFgaClient;
  fetch?: typeof fetch;
  /** admission's reader of manifests and links; whoever passes it closes it (the worker does) */
  reader: ObjectReader;
}

export interface BeginResult {
  /** false: no running row for this crawl — the workflow exits without touching anything */
  running: boolean;
  orgId: string | null;
  maxDepth: number;
}

export interface FinishInput {
  crawlId: string;
  state: 'succeeded' | 'failed';
  stopReason: StopReason;
  failure?: string | null;
}

/** The workflow's first step: is there a running row for it? No row, no crawl. */
export function createBeginCrawl(db: Db): (input: { crawlId: string }) => Promise<BeginResult> {
  return async function beginCrawl(input) {
    const crawl = await getCrawl(db, input.crawlId);
    if (crawl === undefined || crawl.state !== 'running') return { running: false, orgId: crawl?.org_id ?? null, maxDepth: crawl?.max_depth ?? 0 };
    return { running: true, orgId: crawl.org_id, maxDepth: crawl.max_depth };
  };
}

/**
 * Delivers queued tuples to OpenFGA now, so a crawl's archives are visible without waiting for the
 * outbox-drain schedule. Throws while OpenFGA is unreachable (rows stay queued).
 */
export function createDeliverTuples(db: Db, fga: OpenFgaClient): () => Promise<DrainResult> {
  return async function deliverTuples() {
    return deliverOutbox(db, fga);
  };
}

/** Ends the row. Only a running row changes, so retrying (or finishing twice) is harmless. */
export function createFinishCrawl(db: Db): (input: FinishInput) => Promise<{ finished: boolean }> {
  return async function finishCrawl(input) {
    const finished = await finishCrawlRow(db, input.crawlId, { state: input.state, stopReason: input.stopReason, failure: input.failure ?? null });
    log.info('crawl finished', { ...input, finished });
    return { finished };
  };
}

export function createCrawlActivities(deps: ActivityDeps) {
  return {
    beginCrawl: createBeginCrawl(deps.db),
    dispatchLevel: createDispatchLevel(deps),
    admitLevel: createAdmitLevel(deps),
    deliverTuples: createDeliverTuples(deps.db, deps.fga),
    finishCrawl: createFinishCrawl(deps.db),
  };
}
