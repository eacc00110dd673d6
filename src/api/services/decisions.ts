// What the rules decided (spec "What the rules decided"), as the API serves it:
//   forCrawl — one crawl: its rules as fixed, its per-depth decisions, and the pages robots.txt
//     kept out. Same authorization as GET /api/crawls/:id: can_submit on the crawl's organization
//     at HIGHER_CONSISTENCY, 404 otherwise.
//   across — across crawls, for a host and its subdomains at a label boundary, newest crawl
//     first, cut at MAX_DECISION_ROWS. Only crawls of organizations the caller may submit for,
//     asked once per distinct organization, before the cut.
import type { OpenFgaClient } from '@openfga/sdk';
import type { Static } from 'typebox';
import type { Db } from '../../db/connect.ts';
import { groupRobots } from '../../domain/decisions.ts';
import type { Identity } from '../../domain/identity.ts';
import { describePattern } from '../../domain/rules/index.ts';
import { parsePattern } from '../../domain/rules/patterns.ts';
import { canSubmit } from '../../fga/authorize.ts';
import { crawlDecisions, crawlRefusals, decisionOrgs, findDecisions, robotsSkippedUrls, type DecisionAcrossCrawls } from '../../store/decisions.ts';
import { submittableCrawl } from '../crawl-access.ts';
import { BadRequestError } from '../errors.ts';
import { fixedRules } from '../schemas/common.ts';
import { DEFAULT_DAYS, MAX_DECISION_ROWS, type AcrossCrawls, type CrawlDecisions, type DecisionsQuery } from '../schemas/decisions.ts';

export interface DecisionService {
  forCrawl(identity: Identity, crawlId: string): Promise<Static<typeof CrawlDecisions>>;
  across(identity: Identity, query: Static<typeof DecisionsQuery>): Promise<Static<typeof AcrossCrawls>>;
}

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

function storedDomain(domain: string): string {
  const stored = domainQuery(domain);
  if (stored !== null) return stored;
  const why = describePattern(domain).reason ?? 'not a host name';
  throw new BadRequestError('invalid request', { details: [{ field: 'querystring.domain', message: `must be a host name (${why})` }] });
}

function decisionView(r: DecisionAcrossCrawls): Static<typeof AcrossCrawls>['decisions'][number] {
  return {
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
  };
}

export function createDecisionService(deps: { db: Db; fga: OpenFgaClient }): DecisionService {
  const { db, fga } = deps;
  return {
    async forCrawl(identity, crawlId) {
      const crawl = await submittableCrawl(db, fga, identity, crawlId);
      const [decisions, robots, refused] = await Promise.all([crawlDecisions(db, crawlId), robotsSkippedUrls(db, crawlId), crawlRefusals(db, crawlId)]);
      return { rules: fixedRules(crawl.rules), decisions, robots: groupRobots(robots), refused };
    },

    async across(identity, query) {
      const q = { domain: storedDomain(query.domain), days: query.days ?? DEFAULT_DAYS, action: query.action ?? 'skip' };
      // Authorization before the cut, so rows the caller may not see never push out rows they may.
      const orgs = await decisionOrgs(db, q);
      const allowed = await Promise.all(orgs.map(async (org) => ((await canSubmit(fga, identity, org)) ? [org] : [])));
      const rows = await findDecisions(db, { ...q, orgIds: allowed.flat(), limit: MAX_DECISION_ROWS + 1 });
      return { decisions: rows.slice(0, MAX_DECISION_ROWS).map(decisionView), truncated: rows.length > MAX_DECISION_ROWS };
    },
  };
}
