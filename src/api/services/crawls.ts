// Crawls as the API serves them (spec "Starting a crawl" … "Where it stops, and why"): starting
// one, listing them, and one crawl's view. The routes in routes/crawls.ts read the request, call
// this and reply. Every decision about a crawl's organization is can_submit at
// HIGHER_CONSISTENCY; a caller without it gets 404, as for archives.
//
// Starting inserts the row (with its seed pages and capture_job tuples) in one transaction and
// then starts workflow crawl-<id>. The row and the workflow never disagree about whether a crawl
// runs: a workflow that cannot be started finishes the row as failed (503 to the caller); a
// workflow that finds no running row exits; a running row whose workflow is gone (terminated, or
// the API died between commit and start) is finished when the next crawl is asked for.
import type { OpenFgaClient } from '@openfga/sdk';
import { WorkflowNotFoundError, type Client as TemporalClient } from '@temporalio/client';
import type { FastifyBaseLogger } from 'fastify';
import type { Static } from 'typebox';
import { crawlWorkflowId, CRAWL_WORKFLOW } from '../../../temporal.config.ts';
import type { Config } from '../../config/env.ts';
import type { Db } from '../../db/connect.ts';
import type { Crawl, CrawlState } from '../../db/types.ts';
import { createAddressPolicy, refusedUrls, type AddressPolicy } from '../../domain/address-policy.ts';
import { normalizeSeed, planSeedLevel, resolveBehaviors, resolveLimits, seedSource, type CrawlRequestBody, type SeedSource } from '../../domain/crawl.ts';
import type { CrawlCounts } from '../../domain/crawl-counts.ts';
import type { PageCursor } from '../../domain/cursor.ts';
import { BadRequestError, ConflictError, NotFoundError, ServiceUnavailableError } from '../errors.ts';
import type { Identity } from '../../domain/identity.ts';
import { checkCrawlRules, type RuleInput } from '../../domain/rules/index.ts';
import { canSubmit } from '../../fga/authorize.ts';
import { crawlCounts, finishCrawlRow, findRunningCrawl, insertCrawl, isSingleActiveViolation, listCrawls } from '../../store/crawls.ts';
import { enabledTargetUrls } from '../../store/targets.ts';
import { CRAWL_ID_KEY, CRAWL_ORG_KEY, CRAWL_STATE_KEY } from '../../temporal/search-attributes.ts';
import type { CrawlWorkflowInput, crawl as crawlWorkflow } from '../../workflows/crawl.ts';
import { submittableCrawl } from '../crawl-access.ts';
import { fixedRules } from '../schemas/common.ts';
import type { CrawlSummary as CrawlSummarySchema, CrawlView as CrawlViewSchema } from '../schemas/crawls.ts';

/** A running row younger than this is never taken for dead: its workflow may be starting now. */
export const STALE_GRACE_MS = 60_000;
/** How long starting or describing a workflow may take before the caller gets 503. */
export const TEMPORAL_DEADLINE_MS = 10_000;

export interface CrawlServiceDeps {
  config: Config;
  db: Db;
  fga: OpenFgaClient;
  temporal: TemporalClient;
}

export interface CrawlService {
  /** Starts a crawl for the caller's first organization; the id of the crawl started. */
  start(identity: Identity, body: CrawlRequestBody, log: FastifyBaseLogger): Promise<{ crawlId: string }>;
  /** Crawls newest first; empty for a caller who may not submit for their first organization. */
  list(identity: Identity, query: { state?: CrawlState; cursor?: PageCursor; limit: number }): Promise<CrawlSummary[]>;
  /** One crawl with its counts, or 404 unless the caller may submit for its organization. */
  view(identity: Identity, id: string): Promise<CrawlView>;
}

export type CrawlSummary = Static<typeof CrawlSummarySchema>;
export type CrawlView = Static<typeof CrawlViewSchema>;

function iso(at: Date | string | null): string | null {
  return at === null ? null : new Date(at).toISOString();
}

function crawlSummary(r: Awaited<ReturnType<typeof listCrawls>>[number]): CrawlSummary {
  return { ...r, startedAt: r.startedAt.toISOString(), finishedAt: iso(r.finishedAt) };
}

/** A crawl row and its counts as GET /api/crawls/:id answers them. */
export function crawlView(c: Crawl, counts: CrawlCounts): CrawlView {
  return {
    id: c.id,
    orgId: c.org_id,
    state: c.state,
    stopReason: c.stop_reason,
    seeds: c.seeds,
    startedAt: c.started_at.toISOString(),
    finishedAt: iso(c.finished_at),
    waczCount: counts.waczCount,
    submittedBy: c.submitted_by,
    rules: fixedRules(c.rules),
    maxDepth: c.max_depth,
    maxPages: c.max_pages,
    perHostDelayMs: c.per_host_delay_ms,
    hostParallelism: c.host_parallelism,
    behaviorsSeconds: c.behaviors_seconds,
    siteBehaviors: c.site_behaviors,
    qa: c.qa,
    formats: c.formats,
    signing: c.signing,
    depthReached: c.depth_reached,
    dispatchedDepth: c.dispatched_depth,
    pagesDiscovered: counts.pagesDiscovered,
    pagesCaptured: counts.pagesCaptured,
    pagesFailed: counts.pagesFailed,
    pagesSkipped: counts.pagesSkipped,
    pagesPending: counts.pagesPending,
    failure: c.failure,
  };
}

/** The crawl workflow's input, from the configuration the API runs with. */
export function workflowInput(config: Config, crawlId: string, orgId: string): CrawlWorkflowInput {
  return {
    crawlId,
    orgId,
    levelTimeoutSeconds: config.crawl.levelTimeoutSeconds,
    livenessWindowSeconds: config.crawl.livenessWindowSeconds,
    index: config.opensearch !== undefined,
  };
}

export async function startCrawlWorkflow(temporal: TemporalClient, config: Config, crawlId: string, orgId: string): Promise<void> {
  await temporal.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () =>
    temporal.workflow.start<typeof crawlWorkflow>(CRAWL_WORKFLOW, {
      taskQueue: config.temporal.taskQueue,
      workflowId: crawlWorkflowId(crawlId),
      args: [workflowInput(config, crawlId, orgId)],
      typedSearchAttributes: [
        { key: CRAWL_ID_KEY, value: crawlId },
        { key: CRAWL_ORG_KEY, value: orgId },
        { key: CRAWL_STATE_KEY, value: 'running' },
      ],
    }),
  );
}

/** can_submit on the organization, or the same 404 as for a crawl that does not exist. */
async function mustSubmit(fga: OpenFgaClient, identity: Identity, orgId: string | undefined): Promise<string> {
  if (orgId === undefined || !(await canSubmit(fga, identity, orgId))) throw new NotFoundError();
  return orgId;
}

/** The workflow's status by its describe(); NOT_FOUND when there is none, undefined when Temporal cannot tell. */
async function workflowStatus(temporal: TemporalClient, crawlId: string): Promise<string | undefined> {
  try {
    const d = await temporal.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () => temporal.workflow.getHandle(crawlWorkflowId(crawlId)).describe());
    return d.status.name;
  } catch (err) {
    return err instanceof WorkflowNotFoundError ? 'NOT_FOUND' : undefined;
  }
}

/**
 * The running row blocks a new crawl. When its workflow is gone (terminated, failed, or never
 * started because the API died after the commit), finish the row so it stops blocking.
 * Returns true when the way may now be clear.
 */
async function clearDeadRunningCrawl(deps: CrawlServiceDeps, log: FastifyBaseLogger): Promise<boolean> {
  const running = await findRunningCrawl(deps.db);
  if (running === undefined) return true;
  if (Date.now() - running.started_at.getTime() < STALE_GRACE_MS) return false;
  const status = await workflowStatus(deps.temporal, running.id);
  if (status === undefined || status === 'RUNNING') return false; // undefined: cannot tell, leave it alone
  const finished = await finishCrawlRow(deps.db, running.id, {
    state: 'failed',
    stopReason: 'failed',
    failure: `its workflow is ${status.toLowerCase()} and the row was still running`,
  });
  log.warn({ crawlId: running.id, status, finished }, 'finished a running crawl whose workflow is gone');
  return true;
}

type CrawlRow = Parameters<typeof insertCrawl>[1];

/** Inserts the row; a running crawl whose workflow is gone is cleared first, a live one is 409. */
async function insertUnlessRunning(deps: CrawlServiceDeps, row: CrawlRow, log: FastifyBaseLogger): Promise<{ id: string }> {
  try {
    return await insertCrawl(deps.db, row);
  } catch (err) {
    if (!isSingleActiveViolation(err)) throw err;
  }
  if (!(await clearDeadRunningCrawl(deps, log))) throw new ConflictError('a crawl is already running');
  try {
    return await insertCrawl(deps.db, row);
  } catch (again) {
    if (isSingleActiveViolation(again)) throw new ConflictError('a crawl is already running');
    throw again;
  }
}

/** The seeds as asked for (given, or the organization's enabled targets), checked against the rules and the address policy. */
async function checkedSeeds(
  db: Db,
  policy: AddressPolicy,
  orgId: string,
  body: CrawlRequestBody,
  source: SeedSource,
): Promise<{ seeds: string[]; rules: CrawlRow['rules'] }> {
  let raw: string[];
  if (source === 'fromTargets') {
    raw = await enabledTargetUrls(db, orgId, body.fromTargets!.limit);
    if (raw.length === 0) throw new BadRequestError('no enabled targets', { orgId });
  } else {
    raw = body.seeds!;
  }
  const check = checkCrawlRules(raw, body.rules as RuleInput[] | undefined);
  if (!check.ok) {
    const { error, ...details } = check.body;
    throw new BadRequestError(error, details);
  }
  const refused = refusedUrls(policy, raw);
  if (refused.length > 0) throw new BadRequestError(`${source === 'fromTargets' ? 'targets' : 'seeds'} outside the address policy`, { seeds: refused });
  return { seeds: [...new Set(raw.map((s) => normalizeSeed(s)!))], rules: check.fixed };
}

/** Starts the crawl's workflow; when it cannot be, the row is finished as failed and the caller gets 503. */
async function startOrFinish(deps: CrawlServiceDeps, crawlId: string, orgId: string): Promise<void> {
  try {
    await startCrawlWorkflow(deps.temporal, deps.config, crawlId, orgId);
  } catch (err) {
    // No workflow, so no running row either: the next crawl must not be blocked by this one.
    await finishCrawlRow(deps.db, crawlId, {
      state: 'failed',
      stopReason: 'failed',
      failure: `the workflow could not be started: ${(err as Error).message}`.slice(0, 1000),
    });
    throw new ServiceUnavailableError('the crawl could not be started: Temporal is unavailable', `could not start the workflow of crawl ${crawlId}`, {
      cause: err,
    });
  }
}

function createStart(deps: CrawlServiceDeps): CrawlService['start'] {
  const { config } = deps;
  // the flow applies the same policy to the address it connects to; here only the text can be checked
  const addressPolicy = createAddressPolicy(config.capture.allow, config.capture.deniedPorts);
  return async function start(identity, body, log) {
    const source = seedSource(body); // a malformed body is 400 before anything is looked up
    const orgId = await mustSubmit(deps.fga, identity, identity.organizations[0]);
    const { seeds, rules } = await checkedSeeds(deps.db, addressPolicy, orgId, body, source);
    const limits = resolveLimits(body, source, seeds.length);
    const row: CrawlRow = {
      orgId,
      submittedBy: identity.subject,
      seeds,
      rules,
      ...limits,
      ...resolveBehaviors(body),
      qa: body.qa ?? false,
      formats: config.crawl.formats,
      signing: config.crawl.signing,
      seedLevel: planSeedLevel(seeds, limits.maxPages),
    };
    const crawl = await insertUnlessRunning(deps, row, log);
    await startOrFinish(deps, crawl.id, orgId);
    log.info({ crawlId: crawl.id, orgId, seeds: seeds.length, ...limits }, 'crawl started');
    return { crawlId: crawl.id };
  };
}

export function createCrawlService(deps: CrawlServiceDeps): CrawlService {
  const { db, fga } = deps;
  return {
    start: createStart(deps),

    async list(identity, query) {
      const org = identity.organizations[0];
      if (org === undefined || !(await canSubmit(fga, identity, org))) return [];
      const rows = await listCrawls(db, query);
      return rows.map(crawlSummary);
    },

    async view(identity, id) {
      const crawl = await submittableCrawl(db, fga, identity, id);
      return crawlView(crawl, await crawlCounts(db, crawl.id));
    },
  };
}
