// POST /api/crawls/:id/levels/:depth — the capture flow's report of one level (design.md "The
// webhook contract"). Bound to its dispatch: the level's capability and a valid token of any
// identity (levelCapabilityGate); the reporter needs no grant on the crawl's organization.
// Stored in crawl_level_reports (a level reported again replaces its outcome, at most
// MAX_REPORTS_PER_LEVEL times) and the workflow is signalled with a reference.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BadRequestError } from '../errors.ts';
import { MAX_REPORTS_PER_LEVEL } from '../../domain/level.ts';
import { misplacedManifests, pagesNamingTasks } from '../../domain/level-dispatch.ts';
import { foreignTaskIds } from '../../store/task-owners.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { decorateLevelDispatch, dispatchedLevel, levelCapabilityGate } from '../level-capability.ts';
import { errorAnswer, errorResponses } from '../schemas/common.ts';
import { LevelParams, LevelReport, ReportAccepted } from '../schemas/levels.ts';
import type { CrawlLevelService } from '../services/crawl-levels.ts';
import { accepted } from '../accepted.ts';

/** misplaced pages named in a 400 (the count says how many there were) */
const NAMED_IN_ERROR = 20;

const levelReportRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps; levels: CrawlLevelService }> = async (app, opts) => {
  const { db } = opts.deps;
  const { levels } = opts;
  decorateLevelDispatch(app);

  app.post(
    '/api/crawls/:id/levels/:depth',
    {
      bodyLimit: 64 * 1024 * 1024,
      config: { public: true },
      onRequest: levelCapabilityGate({ db, what: 'report', onTokenRefused: (crawlId, depth, reason) => levels.reportRefused(crawlId, depth, reason) }),
      schema: {
        summary: "The capture flow's report of one level",
        description:
          `A Bearer token of any identity AND the level's capability in the x-capture-capability header, as its dispatch carried it (no grant on the organization is needed). ` +
          `Every manifestKey must be the dispatched artifactPrefix + taskId + ".result.json", and no taskId may be one another crawl or level holds (400). Stored in crawl_level_reports (a level reported again replaces its outcome, at most ${MAX_REPORTS_PER_LEVEL} times) and the workflow is signalled with a reference. ` +
          `A report with the capability but a refused token fails the crawl at once (401).`,
        tags: ['crawls'],
        params: LevelParams,
        body: LevelReport,
        response: {
          202: ReportAccepted,
          ...errorResponses,
          401: errorAnswer('no valid token; with the right capability the crawl also fails at once'),
          403: errorAnswer('the capability is missing or matches no dispatch of this level'),
          409: errorAnswer('the crawl is not running, the level deadline has passed, or the level was reported too often'),
          503: errorAnswer('Temporal could not be reached; report again'),
        },
      },
    },
    async (request, reply) => {
      const identity = requireIdentity(request);
      const dispatch = dispatchedLevel(request);
      const id = dispatch.crawlId;
      const depth = request.params.depth;
      const body = request.body;
      const misplaced = misplacedManifests(body.pages, dispatch.artifactPrefix);
      if (misplaced.length > 0) {
        throw new BadRequestError('manifest keys outside the level', {
          detail: `every manifestKey must be ${dispatch.artifactPrefix}<taskId>.result.json (a task id of letters, digits, '.', '_' and '-')`,
          count: misplaced.length,
          pages: misplaced.slice(0, NAMED_IN_ERROR),
        });
      }
      const taskIds = body.pages.flatMap((p) => (p.taskId !== undefined ? [p.taskId] : []));
      const borrowed = pagesNamingTasks(body.pages, await foreignTaskIds(db, id, depth, taskIds));
      if (borrowed.length > 0) {
        throw new BadRequestError('task ids of another crawl or level', {
          detail: `a level report may name only task ids of crawl ${id} level ${depth}; these are on record for another crawl or level`,
          count: borrowed.length,
          pages: borrowed.slice(0, NAMED_IN_ERROR),
        });
      }
      const stored = await levels.report(dispatch, identity, body);
      request.log.info({ crawlId: id, depth, reportId: stored.reportId, pages: body.pages.length, reportedBy: identity.subject }, 'level reported');
      return accepted(reply, { reportId: stored.reportId });
    },
  );
};

export default levelReportRoutes;
