// What the rules decided (spec "What the rules decided"). Registered with the crawl routes, i.e.
// only when the crawl webhook is configured.
//   GET /api/crawls/:id/decisions — one crawl: its rules as fixed, its per-depth decisions, and the
//     pages robots.txt kept out. Same authorization as GET /api/crawls/:id: can_submit on the
//     crawl's organization at HIGHER_CONSISTENCY, 404 otherwise.
//   GET /api/decisions?domain=&days=90&action=skip — across crawls, for a host and its subdomains
//     at a label boundary, newest crawl first, cut at 500 rows. Only crawls of organizations the
//     caller may submit for (asked once per distinct organization, before the cut).
import type { FastifyInstance } from 'fastify';
import { groupRobots } from '../../domain/decisions.ts';
import { BadRequestError } from '../../domain/errors.ts';
import { describePattern, type RuleAction } from '../../domain/rules/index.ts';
import { parsePattern } from '../../domain/rules/patterns.ts';
import { canSubmit } from '../../fga/authorize.ts';
import { submittableCrawl } from '../crawl-access.ts';
import { crawlDecisions, crawlRefusals, decisionOrgs, findDecisions, robotsSkippedUrls } from '../../store/decisions.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorResponses, notFoundResponse } from '../schemas.ts';

export const MAX_DECISION_ROWS = 500;
export const DEFAULT_DAYS = 90;
export const MAX_DAYS = 36_500;

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const actionEnum = ['follow', 'capture', 'skip'] as const;
const samples = { type: 'array', items: { type: 'string' }, maxItems: 5 } as const;

const crawlDecisionsSchema = {
  type: 'object',
  properties: {
    rules: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } }, description: 'as fixed on the crawl' },
    decisions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          depth: { type: 'integer', description: 'the level whose pages the links were read from' },
          rule: { type: 'integer', description: 'numbered from 1; 0 = no rule matched' },
          action: { type: 'string', enum: actionEnum },
          hostname: { type: 'string', description: 'port dropped' },
          links: { type: 'integer', description: 'distinct URLs' },
          samples,
        },
        required: ['depth', 'rule', 'action', 'hostname', 'links', 'samples'],
        additionalProperties: false,
      },
    },
    robots: {
      type: 'array',
      items: {
        type: 'object',
        properties: { hostname: { type: 'string' }, pages: { type: 'integer' }, samples },
        required: ['hostname', 'pages', 'samples'],
        additionalProperties: false,
      },
    },
    refused: {
      type: 'array',
      description: 'what the address policy kept out (a local, private or link-local address, a port, a host over 253 or a URL over 8 KiB: refused as a link; fetch-refused: the flow refused the address a page resolved to, a redirect hop or its robots.txt host) and links past the per-page cap (too-many-links)',
      items: {
        type: 'object',
        properties: {
          depth: { type: 'integer', description: 'the level whose pages the links were read from, or whose page was refused' },
          hostname: { type: 'string', description: 'port dropped, cut to 253 characters' },
          code: { type: 'string' },
          urls: { type: 'integer' },
          samples,
        },
        required: ['depth', 'hostname', 'code', 'urls', 'samples'],
        additionalProperties: false,
      },
    },
  },
  required: ['rules', 'decisions', 'robots', 'refused'],
  additionalProperties: false,
} as const;

const acrossCrawlsSchema = {
  type: 'object',
  properties: {
    decisions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          crawlId: { type: 'string' },
          orgId: { type: 'string' },
          startedAt: { type: 'string', format: 'date-time' },
          seeds: { type: 'array', items: { type: 'string' } },
          depth: { type: 'integer' },
          rule: { type: 'integer' },
          action: { type: 'string', enum: actionEnum },
          pattern: { type: ['string', 'null'], description: 'the rule’s pattern as fixed on the crawl; null for rule 0 (no rule matched)' },
          hostname: { type: 'string' },
          links: { type: 'integer', description: 'distinct URLs at that depth' },
        },
        required: ['crawlId', 'orgId', 'startedAt', 'seeds', 'depth', 'rule', 'action', 'pattern', 'hostname', 'links'],
        additionalProperties: false,
      },
    },
    truncated: { type: 'boolean', description: `the answer was cut at ${MAX_DECISION_ROWS} rows` },
  },
  required: ['decisions', 'truncated'],
  additionalProperties: false,
} as const;

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

export default async function decisionRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { db, fga } = opts.deps;

  app.get<{ Params: { id: string } }>(
    '/api/crawls/:id/decisions',
    {
      schema: {
        summary: 'What the rules of one crawl decided, per depth, rule and host name',
        description: 'Also lists the pages robots.txt kept out. Requires can_submit on the crawl’s organization; otherwise 404.',
        tags: ['crawls'],
        params: {
          type: 'object',
          properties: { id: { type: 'string', format: 'uuid', pattern: UUID_PATTERN } },
          required: ['id'],
          additionalProperties: false,
        },
        response: { 200: crawlDecisionsSchema, ...errorResponses, ...notFoundResponse },
      },
    },
    async (request) => {
      const identity = requireIdentity(request);
      const id = request.params.id.toLowerCase();
      const crawl = await submittableCrawl(db, fga, identity, id);
      const [decisions, robots, refused] = await Promise.all([crawlDecisions(db, id), robotsSkippedUrls(db, id), crawlRefusals(db, id)]);
      return { rules: crawl.rules, decisions, robots: groupRobots(robots), refused };
    },
  );

  app.get<{ Querystring: { domain: string; days: number; action: RuleAction } }>(
    '/api/decisions',
    {
      schema: {
        summary: 'Decisions across crawls for a host name and its subdomains',
        description:
          `Newest crawl first; crawls started in the last \`days\` days (default ${DEFAULT_DAYS}); \`action\` defaults to skip. ` +
          `Cut at ${MAX_DECISION_ROWS} rows (truncated: true). Only crawls of organizations you may submit for.`,
        tags: ['crawls'],
        querystring: {
          type: 'object',
          properties: {
            domain: { type: 'string', minLength: 1, maxLength: 253, description: 'a host name: matches it and its subdomains at a label boundary' },
            days: { type: 'integer', minimum: 1, maximum: MAX_DAYS, default: DEFAULT_DAYS },
            action: { type: 'string', enum: actionEnum, default: 'skip' },
          },
          required: ['domain'],
          additionalProperties: false,
        },
        response: { 200: acrossCrawlsSchema, ...errorResponses },
      },
    },
    async (request) => {
      const identity = requireIdentity(request);
      const { days, action } = request.query;
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
          startedAt: r.started_at,
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
}
