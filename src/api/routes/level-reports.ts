// POST /api/crawls/:id/levels/:depth — the capture flow's report of one level (design.md "The
// webhook contract"). Bound to its dispatch: the level's capability and a valid token of any
// identity (levelCapabilityGate); the reporter needs no grant on the crawl's organization.
// Stored in crawl_level_reports (a level reported again replaces its outcome, at most
// MAX_REPORTS_PER_LEVEL times) and the workflow is signalled with a reference.
import { WorkflowNotFoundError, type Client as TemporalClient } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { crawlWorkflowId, SIGNALS } from '../../../temporal.config.ts';
import type { LevelReportBody } from '../../domain/contract.ts';
import { CRAWL_LIMITS } from '../../domain/crawl.ts';
import { BadRequestError, ConflictError, ForbiddenError, ServiceUnavailableError } from '../../domain/errors.ts';
import { MAX_REPORTS_PER_LEVEL, MAX_RECORDED_DELAY_MS, misplacedManifests } from '../../domain/level-dispatch.ts';
import { getCrawl, upsertLevelReport } from '../../store/crawls.ts';
import { takeReportSlot } from '../../store/level-dispatches.ts';
import type { LevelReported, ReportRefused } from '../../workflows/crawl.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { decorateLevelDispatch, levelCapabilityGate } from '../level-capability.ts';
import { errorBody, errorResponses, uuidParam } from '../schemas.ts';

export const MAX_REPORT_PAGES = 100_000;
/** How long signalling the workflow may take before the reporter gets 503. */
export const SIGNAL_DEADLINE_MS = 10_000;
const MAX_URL = 8192;
/** misplaced pages named in a 400 (the count says how many there were) */
const NAMED_IN_ERROR = 20;

const pageReportSchema = {
  type: 'object',
  properties: {
    url: { type: 'string', minLength: 1, maxLength: MAX_URL },
    status: { type: 'string', enum: ['captured', 'failed', 'skipped'] },
    skipReason: { type: 'string', enum: ['robots'] },
    taskId: { type: 'string', minLength: 1, maxLength: 512 },
    manifestKey: { type: 'string', minLength: 1, maxLength: 1024 },
    manifestError: { type: 'string', minLength: 1, maxLength: 4096 },
    finalUrl: { type: 'string', minLength: 1, maxLength: MAX_URL },
    submittedAt: { type: 'string', format: 'date-time' },
    finishedAt: { type: 'string', format: 'date-time' },
  },
  required: ['url', 'status'],
  additionalProperties: false,
} as const;

const hostReportSchema = {
  type: 'object',
  properties: {
    // host name (≤ 253) with a port
    host: { type: 'string', minLength: 1, maxLength: 260 },
    delayMs: { type: 'integer', minimum: 0, maximum: MAX_RECORDED_DELAY_MS },
    lastFinishedAt: { type: 'string', format: 'date-time' },
  },
  required: ['host', 'delayMs'],
  additionalProperties: false,
} as const;

/** The report route's body: LevelReportBody (src/domain/contract.ts). */
export const levelReportSchema = {
  type: 'object',
  properties: {
    depth: { type: 'integer', minimum: 0, maximum: CRAWL_LIMITS.maxDepth },
    pages: { type: 'array', maxItems: MAX_REPORT_PAGES, items: pageReportSchema },
    hosts: { type: 'array', maxItems: MAX_REPORT_PAGES, items: hostReportSchema, description: 'per host: the delay the flow kept (perHostDelayMs or a longer Crawl-delay) and its last finish' },
  },
  required: ['depth', 'pages'],
  additionalProperties: false,
} as const;

/** Tells the workflow that a report carrying the level's capability had its token refused. */
export async function signalReportRefused(temporal: TemporalClient, crawlId: string, depth: number, reason: string): Promise<void> {
  const refused: ReportRefused = { depth, reason };
  await temporal.withDeadline(Date.now() + SIGNAL_DEADLINE_MS, () => temporal.workflow.getHandle(crawlWorkflowId(crawlId)).signal(SIGNALS.reportRefused, refused));
}

export default async function levelReportRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { db } = opts.deps;
  const temporal = opts.deps.temporal;
  if (temporal === undefined) throw new Error('the level report route needs a Temporal client (AppDeps.temporal)');
  decorateLevelDispatch(app);

  app.post<{ Params: { id: string; depth: number }; Body: LevelReportBody }>(
    '/api/crawls/:id/levels/:depth',
    {
      bodyLimit: 64 * 1024 * 1024,
      config: { public: true },
      onRequest: levelCapabilityGate({ db, what: 'report', onTokenRefused: (crawlId, depth, reason) => signalReportRefused(temporal, crawlId, depth, reason) }),
      schema: {
        summary: "The capture flow's report of one level",
        description:
          `A Bearer token of any identity AND the level's capability in the x-capture-capability header, as its dispatch carried it (no grant on the organization is needed). ` +
          `Every manifestKey must be the dispatched artifactPrefix + taskId + ".result.json". Stored in crawl_level_reports (a level reported again replaces its outcome, at most ${MAX_REPORTS_PER_LEVEL} times) and the workflow is signalled with a reference. ` +
          `A report with the capability but a refused token fails the crawl at once (401).`,
        tags: ['crawls'],
        params: {
          type: 'object',
          properties: { id: uuidParam.properties.id, depth: { type: 'integer', minimum: 0, maximum: CRAWL_LIMITS.maxDepth } },
          required: ['id', 'depth'],
          additionalProperties: false,
        },
        body: levelReportSchema,
        response: {
          202: { type: 'object', properties: { reportId: { type: 'string' } }, required: ['reportId'], additionalProperties: false },
          ...errorResponses,
          401: { description: 'no valid token; with the right capability the crawl also fails at once', ...errorBody },
          403: { description: 'the capability is missing or matches no dispatch of this level', ...errorBody },
          409: { description: 'the crawl is not running, the level deadline has passed, or the level was reported too often', ...errorBody },
          503: { description: 'Temporal could not be reached; report again', ...errorBody },
        },
      },
    },
    async (request, reply) => {
      const identity = requireIdentity(request);
      const dispatch = request.levelDispatch;
      if (dispatch === null) throw new ForbiddenError('capability refused');
      const id = dispatch.crawlId;
      const depth = request.params.depth;
      const body = request.body;
      if (body.depth !== depth) {
        throw new BadRequestError('invalid request', { details: [{ field: 'body.depth', message: `must equal the level in the URL (${depth})` }] });
      }
      const misplaced = misplacedManifests(body.pages, dispatch.artifactPrefix);
      if (misplaced.length > 0) {
        throw new BadRequestError('manifest keys outside the level', {
          detail: `every manifestKey must be ${dispatch.artifactPrefix}<taskId>.result.json (a task id of letters, digits, '.', '_' and '-')`,
          count: misplaced.length,
          pages: misplaced.slice(0, NAMED_IN_ERROR),
        });
      }
      const crawl = await getCrawl(db, id);
      if (crawl === undefined || crawl.state !== 'running') throw new ConflictError('the crawl is not running', { state: crawl?.state ?? null });
      if (Date.now() > dispatch.deadline.getTime()) throw new ConflictError(`level ${depth} is past its deadline (${dispatch.deadline.toISOString()})`);

      const stored = await db.transaction().execute(async (trx) => {
        const n = await takeReportSlot(trx, id, depth, MAX_REPORTS_PER_LEVEL);
        if (n === null) return null;
        return upsertLevelReport(trx, id, depth, body, identity.subject);
      });
      if (stored === null) throw new ConflictError(`level ${depth} was already reported ${MAX_REPORTS_PER_LEVEL} times; no more reports of it are taken`);
      const signal: LevelReported = { depth, reportId: stored.reportId };
      try {
        await temporal.withDeadline(Date.now() + SIGNAL_DEADLINE_MS, () => temporal.workflow.getHandle(crawlWorkflowId(id)).signal(SIGNALS.levelReported, signal));
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) throw new ConflictError('the crawl is not running');
        throw new ServiceUnavailableError('the report was stored but the crawl could not be told: Temporal is unavailable; report again', `could not signal crawl ${id} that level ${depth} was reported`, { cause: err });
      }
      request.log.info({ crawlId: id, depth, reportId: stored.reportId, pages: body.pages.length, reportedBy: identity.subject }, 'level reported');
      void reply.code(202);
      return { reportId: stored.reportId };
    },
  );
}
