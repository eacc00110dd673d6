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
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { decorateLevelDispatch, dispatchedLevel, levelCapabilityGate } from '../level-capability.ts';
import { errorAnswer, errorResponses, notFoundResponse, UuidParams } from '../schemas/common.ts';
import { Pacing, Progress } from '../schemas/crawl-progress.ts';
import { Heartbeat, HeartbeatAccepted, LevelParams } from '../schemas/levels.ts';
import type { CrawlLevelService } from '../services/crawl-levels.ts';
import { accepted } from '../accepted.ts';

const crawlProgressRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps; levels: CrawlLevelService }> = async (app, opts) => {
  const { db } = opts.deps;
  const { levels } = opts;
  decorateLevelDispatch(app);

  app.post(
    '/api/crawls/:id/levels/:depth/heartbeat',
    {
      config: { public: true },
      onRequest: levelCapabilityGate({ db, what: 'heartbeat' }),
      schema: {
        summary: "The capture flow's heartbeat while it works on a level",
        description:
          "Same credentials as the level's report: a Bearer token of any identity and the level's capability in x-capture-capability. Once a level has had a heartbeat, silence longer than the liveness window (60 s) dispatches it again. Every heartbeat is accepted; at most one per quarter of the liveness window is passed on to the workflow (passedOn), since each signal stays in its history.",
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
      const { passedOn } = await levels.heartbeat(dispatchedLevel(request), request.body);
      return accepted(reply, { accepted: true, passedOn });
    },
  );

  app.get(
    '/api/crawls/:id/progress',
    {
      schema: {
        summary: 'Live progress of a crawl',
        description:
          'Per level: pages by state (the ledger), pages dispatched, re-dispatches and the flow\'s latest heartbeat (the workflow); per host of the level in flight: queue length, pages in flight and the next allowed start. A finished crawl (or one whose workflow cannot be asked) is answered from the ledger alone, source "ledger". 404 unless you may submit for its organization.',
        tags: ['crawls'],
        params: UuidParams,
        response: { 200: Progress, ...errorResponses, ...notFoundResponse },
      },
    },
    async (request) => {
      return levels.progress(requireIdentity(request), request.params.id, request.log);
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
      return levels.pacing(requireIdentity(request), request.params.id);
    },
  );
};

export default crawlProgressRoutes;
