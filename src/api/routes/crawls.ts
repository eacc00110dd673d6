// The crawl routes (spec "Starting a crawl" … "Where it stops, and why"). Registered only when
// both webhook settings are set. Every decision about a crawl's organization is can_submit at
// HIGHER_CONSISTENCY; a caller without it gets 404, as for archives.
//
// POST /api/crawls inserts the row (with its seed pages and capture_job tuples) in one
// transaction and then starts workflow crawl-<id>. The row and the workflow never disagree
// about whether a crawl runs: a workflow that cannot be started finishes the row as failed
// (503 to the caller); a workflow that finds no running row exits; a running row whose workflow
// is gone (terminated, or the API died between commit and start) is finished when the next
// crawl is asked for.
//
// The capture flow's level report, bound to its dispatch rather than to a grant, is in
// level-reports.ts.
import { WorkflowNotFoundError, type Client as TemporalClient } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { crawlWorkflowId, CRAWL_WORKFLOW } from '../../../temporal.config.ts';
import type { Config } from '../../config/env.ts';
import { createAddressPolicy, refusedUrls } from '../../domain/address-policy.ts';
import type { Crawl } from '../../db/types.ts';
import {
  CRAWL_LIMITS,
  normalizeSeed,
  planSeedLevel,
  resolveLimits,
  seedSource,
  STOP_REASONS,
  type CrawlRequestBody,
} from '../../domain/crawl.ts';
import { BadRequestError, ConflictError, NotFoundError, ServiceUnavailableError } from '../../domain/errors.ts';
import type { Identity } from '../../domain/identity.ts';
import { cursorQuerySchema, parseCursor } from '../../domain/cursor.ts';
import { checkCrawlRules, RULES_JSON_SCHEMA, type RuleInput } from '../../domain/rules/index.ts';
import { canSubmit } from '../../fga/authorize.ts';
import {
  crawlCounts,
  finishCrawlRow,
  findRunningCrawl,
  insertCrawl,
  isSingleActiveViolation,
  listCrawls,
} from '../../store/crawls.ts';
import { enabledTargetUrls } from '../../store/targets.ts';
import { CRAWL_ID_KEY, CRAWL_ORG_KEY, CRAWL_STATE_KEY } from '../../temporal/search-attributes.ts';
import type { CrawlWorkflowInput, crawl as crawlWorkflow } from '../../workflows/crawl.ts';
import { submittableCrawl } from '../crawl-access.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorBody, errorResponses, notFoundResponse } from '../schemas.ts';

/** A running row younger than this is never taken for dead: its workflow may be starting now. */
export const STALE_GRACE_MS = 60_000;
/** How long starting or signalling a workflow may take before the caller gets 503. */
export const TEMPORAL_DEADLINE_MS = 10_000;

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const idParams = {
  type: 'object',
  properties: { id: { type: 'string', format: 'uuid', pattern: UUID_PATTERN } },
  required: ['id'],
  additionalProperties: false,
} as const;

const crawlBodySchema = {
  type: 'object',
  properties: {
    seeds: {
      type: 'array',
      minItems: 1,
      maxItems: CRAWL_LIMITS.seeds,
      items: { type: 'string', minLength: 1, maxLength: CRAWL_LIMITS.seedLength },
      description: 'URLs to start from (exactly one of seeds or fromTargets)',
    },
    fromTargets: {
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1, maximum: CRAWL_LIMITS.fromTargetsLimit, description: 'take the first n enabled targets' } },
      additionalProperties: false,
      description: "seed from your organization's enabled capture_targets (maxDepth then defaults to 0)",
    },
    rules: { ...RULES_JSON_SCHEMA, description: 'first match decides; default [{"follow":"same-origin"}]' },
    maxDepth: { type: 'integer', minimum: 0, maximum: CRAWL_LIMITS.maxDepth, description: 'default 2 (0 with fromTargets)' },
    maxPages: { type: 'integer', minimum: 1, maximum: CRAWL_LIMITS.maxPages, description: 'total pages, seeds included; default 30' },
    perHostDelayMs: { type: 'integer', minimum: 0, maximum: CRAWL_LIMITS.perHostDelayMs, description: 'from one finish to the next submit on a host; default 2000' },
    hostParallelism: { type: 'integer', minimum: 1, maximum: CRAWL_LIMITS.hostParallelism, description: 'distinct hosts at once; default 4' },
  },
  additionalProperties: false,
} as const;

const isoOrNull = { type: ['string', 'null'], format: 'date-time' } as const;
const stateEnum = ['running', 'succeeded', 'failed'] as const;
const stopEnum = [...STOP_REASONS, null] as const;

const crawlRowSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    orgId: { type: 'string' },
    state: { type: 'string', enum: stateEnum },
    stopReason: { type: ['string', 'null'], enum: stopEnum },
    seeds: { type: 'array', items: { type: 'string' } },
    startedAt: { type: 'string', format: 'date-time' },
    finishedAt: isoOrNull,
    waczCount: { type: 'integer' },
  },
  required: ['id', 'orgId', 'state', 'stopReason', 'seeds', 'startedAt', 'finishedAt', 'waczCount'],
  additionalProperties: false,
} as const;

const crawlDetailSchema = {
  type: 'object',
  properties: {
    ...crawlRowSchema.properties,
    submittedBy: { type: 'string' },
    rules: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } } },
    maxDepth: { type: 'integer' },
    maxPages: { type: 'integer' },
    perHostDelayMs: { type: 'integer' },
    hostParallelism: { type: 'integer' },
    formats: { type: 'array', items: { type: 'string' } },
    signing: { type: 'boolean' },
    depthReached: { type: 'integer' },
    dispatchedDepth: { type: ['integer', 'null'] },
    pagesDiscovered: { type: 'integer' },
    pagesCaptured: { type: 'integer' },
    pagesFailed: { type: 'integer' },
    pagesSkipped: { type: 'integer' },
    pagesPending: { type: 'integer' },
    failure: { type: ['string', 'null'] },
  },
  required: [
    ...crawlRowSchema.required,
    'submittedBy',
    'rules',
    'maxDepth',
    'maxPages',
    'perHostDelayMs',
    'hostParallelism',
    'formats',
    'signing',
    'depthReached',
    'dispatchedDepth',
    'pagesDiscovered',
    'pagesCaptured',
    'pagesFailed',
    'pagesSkipped',
    'pagesPending',
    'failure',
  ],
  additionalProperties: false,
} as const;

const serviceUnavailable = { 503: { description: 'Temporal could not be reached; nothing was started', ...errorBody } } as const;
const conflict = { 409: { description: 'a crawl is already running (retrying cannot help until it ends)', ...errorBody } } as const;

function detail(c: Crawl, counts: Awaited<ReturnType<typeof crawlCounts>>) {
  return {
    id: c.id,
    orgId: c.org_id,
    state: c.state,
    stopReason: c.stop_reason,
    seeds: c.seeds,
    startedAt: c.started_at.toISOString(),
    finishedAt: c.finished_at === null ? null : new Date(c.finished_at).toISOString(),
    waczCount: counts.waczCount,
    submittedBy: c.submitted_by,
    rules: c.rules,
    maxDepth: c.max_depth,
    maxPages: c.max_pages,
    perHostDelayMs: c.per_host_delay_ms,
    hostParallelism: c.host_parallelism,
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
  return { crawlId, orgId, levelTimeoutSeconds: config.crawl.levelTimeoutSeconds, livenessWindowSeconds: config.crawl.livenessWindowSeconds, index: config.opensearch !== undefined };
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

export default async function crawlRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { db, fga, config } = opts.deps;
  // the flow applies the same policy to the address it connects to; here only the text can be checked
  const addressPolicy = createAddressPolicy(config.capture.allow, config.capture.deniedPorts);
  const temporal = opts.deps.temporal;
  if (temporal === undefined) throw new Error('crawl routes need a Temporal client (AppDeps.temporal)');

  /** can_submit on the organization, or the same 404 as for a crawl that does not exist. */
  const mustSubmit = async (identity: Identity, orgId: string | undefined): Promise<string> => {
    if (orgId === undefined || !(await canSubmit(fga, identity, orgId))) throw new NotFoundError();
    return orgId;
  };

  /**
   * The running row blocks a new crawl. When its workflow is gone (terminated, failed, or never
   * started because the API died after the commit), finish the row so it stops blocking.
   * Returns true when the way may now be clear.
   */
  const clearDeadRunningCrawl = async (log: FastifyInstance['log']): Promise<boolean> => {
    const running = await findRunningCrawl(db);
    if (running === undefined) return true;
    if (Date.now() - running.started_at.getTime() < STALE_GRACE_MS) return false;
    let status: string;
    try {
      const d = await temporal.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () => temporal.workflow.getHandle(crawlWorkflowId(running.id)).describe());
      status = d.status.name;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) return false; // cannot tell: leave it alone
      status = 'NOT_FOUND';
    }
    if (status === 'RUNNING') return false;
    const finished = await finishCrawlRow(db, running.id, { state: 'failed', stopReason: 'failed', failure: `its workflow is ${status.toLowerCase()} and the row was still running` });
    log.warn({ crawlId: running.id, status, finished }, 'finished a running crawl whose workflow is gone');
    return true;
  };

  app.post<{ Body: CrawlRequestBody }>(
    '/api/crawls',
    {
      schema: {
        summary: 'Start a crawl',
        description:
          'Exactly one of seeds or fromTargets. 202 means accepted, not finished: GET /api/crawls/:id has the outcome. 409 means a crawl is already running. Capture formats and signing come from the configuration.',
        tags: ['crawls'],
        body: crawlBodySchema,
        response: {
          202: { type: 'object', properties: { crawlId: { type: 'string' } }, required: ['crawlId'], additionalProperties: false },
          ...errorResponses,
          ...notFoundResponse,
          ...conflict,
          ...serviceUnavailable,
        },
      },
    },
    async (request, reply) => {
      const identity = requireIdentity(request);
      const body = request.body;
      const source = seedSource(body);
      const orgId = await mustSubmit(identity, identity.organizations[0]);

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
      const refused = refusedUrls(addressPolicy, raw);
      if (refused.length > 0) throw new BadRequestError(`${source === 'fromTargets' ? 'targets' : 'seeds'} outside the address policy`, { seeds: refused });
      const seeds = [...new Set(raw.map((s) => normalizeSeed(s)!))];
      const limits = resolveLimits(body, source, seeds.length);

      const insert = () =>
        insertCrawl(db, {
          orgId,
          submittedBy: identity.subject,
          seeds,
          rules: check.fixed,
          ...limits,
          formats: config.crawl.formats,
          signing: config.crawl.signing,
          seedLevel: planSeedLevel(seeds, limits.maxPages),
        });
      let crawl: { id: string };
      try {
        crawl = await insert();
      } catch (err) {
        if (!isSingleActiveViolation(err)) throw err;
        if (!(await clearDeadRunningCrawl(request.log))) throw new ConflictError('a crawl is already running');
        try {
          crawl = await insert();
        } catch (again) {
          if (isSingleActiveViolation(again)) throw new ConflictError('a crawl is already running');
          throw again;
        }
      }

      try {
        await startCrawlWorkflow(temporal, config, crawl.id, orgId);
      } catch (err) {
        // No workflow, so no running row either: the next crawl must not be blocked by this one.
        await finishCrawlRow(db, crawl.id, { state: 'failed', stopReason: 'failed', failure: `the workflow could not be started: ${(err as Error).message}`.slice(0, 1000) });
        throw new ServiceUnavailableError('the crawl could not be started: Temporal is unavailable', `could not start the workflow of crawl ${crawl.id}`, { cause: err });
      }
      request.log.info({ crawlId: crawl.id, orgId, seeds: seeds.length, ...limits }, 'crawl started');
      void reply.code(202);
      return { crawlId: crawl.id };
    },
  );

  app.get<{ Querystring: { state?: 'running' | 'succeeded' | 'failed'; before?: string; beforeId?: string; limit: number } }>(
    '/api/crawls',
    {
      schema: {
        summary: 'Crawls, newest first',
        description:
          'Gated on can_submit on your first organization: without it the answer is an empty array, not 403 or 404. Every row carries its orgId. Pass the startedAt of the last row as `before` for the next page, and its id as `beforeId` so crawls that share that startedAt are not skipped. Unknown query parameters are dropped.',
        tags: ['crawls'],
        querystring: {
          type: 'object',
          properties: {
            state: { type: 'string', enum: stateEnum },
            ...cursorQuerySchema('startedAt'),
            limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
          },
          additionalProperties: false,
        },
        response: { 200: { type: 'array', items: crawlRowSchema }, ...errorResponses },
      },
    },
    async (request) => {
      const identity = requireIdentity(request);
      const { state, limit } = request.query;
      const cursor = parseCursor(request.query);
      const org = identity.organizations[0];
      if (org === undefined || !(await canSubmit(fga, identity, org))) return [];
      const rows = await listCrawls(db, { state, cursor, limit });
      return rows.map((r) => ({ ...r, startedAt: r.startedAt.toISOString(), finishedAt: r.finishedAt === null ? null : new Date(r.finishedAt).toISOString() }));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/crawls/:id',
    {
      schema: {
        summary: 'One crawl: its state, why it stopped, and what it took',
        description: 'pagesDiscovered counts every page the crawl recorded and every link the rules skipped; the difference to pagesCaptured is what failures, rules, robots and the caps threw away. 404 unless you may submit for its organization.',
        tags: ['crawls'],
        params: idParams,
        response: { 200: crawlDetailSchema, ...errorResponses, ...notFoundResponse },
      },
    },
    async (request) => {
      const identity = requireIdentity(request);
      const crawl = await submittableCrawl(db, fga, identity, request.params.id);
      return detail(crawl, await crawlCounts(db, crawl.id));
    },
  );
}
