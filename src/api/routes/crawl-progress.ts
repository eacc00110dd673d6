// A crawl while it runs and after:
//
//   POST /api/crawls/:id/levels/:depth/heartbeat   the capture flow, every few seconds while it
//        works on a level: the level's capability (levelCapabilityGate, as for its report) and a
//        token of any identity; signals the workflow (levelHeartbeat), which keeps the latest as
//        the level's progress and re-dispatches a level whose heartbeats stop.
//   GET  /api/crawls/:id/progress   phase, current depth, per-level counts, per host queue / in
//        flight / next allowed start: the workflow's progress query merged with the ledger.
//   GET  /api/crawls/:id/pacing     per host: pages, the smallest gap from the previous finish
//        (the spec's lag() query), the delay owed (perHostDelayMs or a longer Crawl-delay), and
//        the gaps that fell short.
// The two GETs answer as GET /api/crawls/:id does: 404 unless you may submit for its organization.
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { crawlWorkflowId, QUERIES, SIGNALS } from '../../../temporal.config.ts';
import type { CrawlProgress } from '../../domain/crawl.ts';
import { BadRequestError, ConflictError, ForbiddenError, ServiceUnavailableError } from '../../domain/errors.ts';
import type { LevelHeartbeat } from '../../domain/liveness.ts';
import { busiestHosts, progressView } from '../../domain/progress.ts';
import { getCrawl } from '../../store/crawls.ts';
import { levelCounts, pacingAudit } from '../../store/progress.ts';
import { submittableCrawl } from '../crawl-access.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { decorateLevelDispatch, levelCapabilityGate } from '../level-capability.ts';
import { errorAnswer, errorResponses, notFoundResponse, UuidParams } from '../schemas/common.ts';
import { Pacing, Progress } from '../schemas/crawl-progress.ts';
import { Heartbeat, HeartbeatAccepted, LevelParams } from '../schemas/levels.ts';

/** How long asking or signalling the workflow may take. */
export const WORKFLOW_DEADLINE_MS = 5_000;

const crawlProgressRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, opts) => {
  const { db, fga } = opts.deps;
  const temporal = opts.deps.temporal;
  if (temporal === undefined) throw new Error('the crawl progress routes need a Temporal client (AppDeps.temporal)');
  decorateLevelDispatch(app);

  app.post(
    '/api/crawls/:id/levels/:depth/heartbeat',
    {
      config: { public: true },
      onRequest: levelCapabilityGate({ db, what: 'heartbeat' }),
      schema: {
        summary: "The capture flow's heartbeat while it works on a level",
        description:
          "Same credentials as the level's report: a Bearer token of any identity and the level's capability in x-capture-capability. Once a level has had a heartbeat, silence longer than the liveness window (60 s) dispatches it again.",
        tags: ['crawls'],
        params: LevelParams,
        body: Heartbeat,
        response: {
          202: HeartbeatAccepted,
          ...errorResponses,
          403: errorAnswer('the capability is missing or matches no dispatch of this level'),
          409: errorAnswer('the crawl is not running'),
          503: errorAnswer('Temporal could not be reached'),
        },
      },
    },
    async (request, reply) => {
      requireIdentity(request);
      const dispatch = request.levelDispatch;
      if (dispatch === null) throw new ForbiddenError('capability refused');
      const depth = request.params.depth;
      if (request.body.depth !== depth) {
        throw new BadRequestError('invalid request', { details: [{ field: 'body.depth', message: `must equal the level in the URL (${depth})` }] });
      }
      const crawl = await getCrawl(db, dispatch.crawlId);
      if (crawl === undefined || crawl.state !== 'running') throw new ConflictError('the crawl is not running', { state: crawl?.state ?? null });
      // every signal stays in the workflow's history: only the busiest hosts are passed on
      const beat: LevelHeartbeat = { ...request.body, hosts: busiestHosts(request.body.hosts), receivedAt: new Date().toISOString() };
      try {
        await temporal.withDeadline(Date.now() + WORKFLOW_DEADLINE_MS, () => temporal.workflow.getHandle(crawlWorkflowId(dispatch.crawlId)).signal(SIGNALS.levelHeartbeat, beat));
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) throw new ConflictError('the crawl is not running');
        throw new ServiceUnavailableError('Temporal is unavailable; the heartbeat was not passed on', `could not signal crawl ${dispatch.crawlId} a heartbeat of level ${depth}`, { cause: err });
      }
      void reply.code(202);
      return { accepted: true };
    },
  );

  app.get(
    '/api/crawls/:id/progress',
    {
      schema: {
        summary: 'Live progress of a crawl',
        description:
          "Per level: pages by state (the ledger), pages dispatched, re-dispatches and the flow's latest heartbeat (the workflow); per host of the level in flight: queue length, pages in flight and the next allowed start. A finished crawl (or one whose workflow cannot be asked) is answered from the ledger alone, source \"ledger\". 404 unless you may submit for its organization.",
        tags: ['crawls'],
        params: UuidParams,
        response: { 200: Progress, ...errorResponses, ...notFoundResponse },
      },
    },
    async (request) => {
      const crawl = await submittableCrawl(db, fga, requireIdentity(request), request.params.id);
      let live: CrawlProgress | null = null;
      if (crawl.state === 'running') {
        try {
          live = await temporal.withDeadline(Date.now() + WORKFLOW_DEADLINE_MS, () => temporal.workflow.getHandle(crawlWorkflowId(crawl.id)).query<CrawlProgress>(QUERIES.progress));
        } catch (err) {
          request.log.warn({ err, crawlId: crawl.id }, 'progress query failed; answering from the ledger');
        }
      }
      const facts = { id: crawl.id, state: crawl.state, stopReason: crawl.stop_reason, failure: crawl.failure, maxDepth: crawl.max_depth, depthReached: crawl.depth_reached };
      return progressView(facts, await levelCounts(db, crawl.id), live);
    },
  );

  app.get(
    '/api/crawls/:id/pacing',
    {
      schema: {
        summary: 'The pacing audit of a crawl: the spacing every host really got',
        description:
          "Per host, over every level: pages with both timestamps, the smallest gap from the previous capture's finish to the next submit, the delay the host was owed (perHostDelayMs, or the robots.txt Crawl-delay the flow reported when longer) and how many gaps fell short (expected 0). 404 unless you may submit for its organization.",
        tags: ['crawls'],
        params: UuidParams,
        response: { 200: Pacing, ...errorResponses, ...notFoundResponse },
      },
    },
    async (request) => {
      const crawl = await submittableCrawl(db, fga, requireIdentity(request), request.params.id);
      const hosts = await pacingAudit(db, crawl.id, crawl.per_host_delay_ms);
      return { crawlId: crawl.id, perHostDelayMs: crawl.per_host_delay_ms, violations: hosts.reduce((n, h) => n + h.violations, 0), hosts };
    },
  );
};

export default crawlProgressRoutes;
