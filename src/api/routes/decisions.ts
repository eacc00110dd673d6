// What the rules decided (spec "What the rules decided"). Registered with the crawl routes, i.e.
// only when the crawl webhook is configured.
//   GET /api/crawls/:id/decisions — one crawl: its rules as fixed, its per-depth decisions, and the
//     pages robots.txt kept out. Same authorization as GET /api/crawls/:id: can_submit on the
//     crawl's organization at HIGHER_CONSISTENCY, 404 otherwise.
//   GET /api/decisions?domain=&days=90&action=skip — across crawls, for a host and its subdomains
//     at a label boundary, newest crawl first, cut at 500 rows. Only crawls of organizations the
//     caller may submit for (asked once per distinct organization, before the cut).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { groupRobots } from '../../domain/decisions.ts';
import { BadRequestError } from '../../domain/errors.ts';
import { describePattern } from '../../domain/rules/index.ts';
import { parsePattern } from '../../domain/rules/patterns.ts';
import { canSubmit } from '../../fga/authorize.ts';
import { submittableCrawl } from '../crawl-access.ts';
import { crawlDecisions, crawlRefusals, decisionOrgs, findDecisions, robotsSkippedUrls } from '../../store/decisions.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorResponses, fixedRules, notFoundResponse, UuidParams } from '../schemas/common.ts';
import { AcrossCrawls, CrawlDecisions, DEFAULT_DAYS, DecisionsQuery, MAX_DECISION_ROWS } from '../schemas/decisions.ts';

export { DEFAULT_DAYS, MAX_DAYS, MAX_DECISION_ROWS } from '../schemas/decisions.ts';

/** The pattern of rule n (1-based) in rules as fixed on a crawl row; null for rule 0 or anything unexpected. */
export function patternOf(rules: unknown, rule: number): string | null {
  if (rule < 1 || !Array.isArray(rules)) return null;
  const r = rules[rule - 1] as Record<string, unknown> | undefined;
  if (typeof r !== 'object' || r === null) return null;
  const v = Object.values(r)[0];
  return typeof v === 'string' ? v : null;
}

/** The domain query as host names are stored: lower-case, punycode, no trailing dot; null if not a host name. */
export function domainQuery(domain: string): string | null {
  const p = parsePattern(domain.toLowerCase().replace(/(.)\.$/, '$1'));
  return p.kind === 'domain' ? p.ascii : null;
}

const decisionRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, opts) => {
  const { db, fga } = opts.deps;

  app.get(
    '/api/crawls/:id/decisions',
    {
      schema: {
        summary: 'What the rules of one crawl decided, per depth, rule and host name',
        description: 'Also lists the pages robots.txt kept out. Requires can_submit on the crawl’s organization; otherwise 404.',
        tags: ['crawls'],
        params: UuidParams,
        response: { 200: CrawlDecisions, ...errorResponses, ...notFoundResponse },
      },
    },
    async (request) => {
      const identity = requireIdentity(request);
      const id = request.params.id.toLowerCase();
      const crawl = await submittableCrawl(db, fga, identity, id);
      const [decisions, robots, refused] = await Promise.all([crawlDecisions(db, id), robotsSkippedUrls(db, id), crawlRefusals(db, id)]);
      return { rules: fixedRules(crawl.rules), decisions, robots: groupRobots(robots), refused };
    },
  );

  app.get(
    '/api/decisions',
    {
      schema: {
        summary: 'Decisions across crawls for a host name and its subdomains',
        description:
          `Newest crawl first; crawls started in the last \`days\` days (default ${DEFAULT_DAYS}); \`action\` defaults to skip. ` +
          `Cut at ${MAX_DECISION_ROWS} rows (truncated: true). Only crawls of organizations you may submit for.`,
        tags: ['crawls'],
        querystring: DecisionsQuery,
        response: { 200: AcrossCrawls, ...errorResponses },
      },
    },
    async (request) => {
      const identity = requireIdentity(request);
      const { days = DEFAULT_DAYS, action = 'skip' } = request.query;
      const domain = domainQuery(request.query.domain);
      if (domain === null) {
        const why = describePattern(request.query.domain).reason ?? 'not a host name';
        throw new BadRequestError('invalid request', { details: [{ field: 'querystring.domain', message: `must be a host name (${why})` }] });
      }
      const q = { domain, days, action };
      // Authorization before the cut, so rows the caller may not see never push out rows they may.
      const orgs = await decisionOrgs(db, q);
      const allowed = await Promise.all(orgs.map(async (org) => ((await canSubmit(fga, identity, org)) ? [org] : [])));
      const rows = await findDecisions(db, { ...q, orgIds: allowed.flat(), limit: MAX_DECISION_ROWS + 1 });
      return {
        decisions: rows.slice(0, MAX_DECISION_ROWS).map((r) => ({
          crawlId: r.crawl_id,
          orgId: r.org_id,
          startedAt: r.started_at.toISOString(),
          seeds: r.seeds,
          depth: r.depth,
          rule: r.rule,
          action: r.action,
          pattern: patternOf(r.rules, r.rule),
          hostname: r.hostname,
          links: r.links,
        })),
        truncated: rows.length > MAX_DECISION_ROWS,
      };
    },
  );
};

export default decisionRoutes;
