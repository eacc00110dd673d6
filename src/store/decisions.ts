// crawl_decisions: what the rules decided per depth, rule and host name; and the pages robots.txt
// kept out (crawl_pages.skip_reason = 'robots').
import { sql } from 'kysely';
import type { RuleAction } from '../db/types.ts';
import type { DecisionTally, RefusalTally } from '../domain/decisions.ts';
import type { Queryable } from '../db/connect.ts';

/** Rows per INSERT: 7 parameters each, far below Postgres' 65535. */
const INSERT_CHUNK = 1000;

/**
 * Records one level's tallies. Reporting the same level again replaces its rows instead of adding
 * to them. Call it inside the level's admission transaction.
 */
export async function replaceLevelDecisions(trx: Queryable, crawlId: string, depth: number, tallies: readonly DecisionTally[]): Promise<void> {
  await trx.deleteFrom('crawl_decisions').where('crawl_id', '=', crawlId).where('depth', '=', depth).execute();
  for (let i = 0; i < tallies.length; i += INSERT_CHUNK) {
    const chunk = tallies.slice(i, i + INSERT_CHUNK);
    await trx
      .insertInto('crawl_decisions')
      .values(chunk.map((t) => ({ crawl_id: crawlId, depth, rule: t.rule, action: t.action, hostname: t.hostname, links: t.links, samples: t.samples })))
      .execute();
  }
}

/** URLs per INSERT of skipped links (one array parameter each, so only the statement's size bounds it). */
const SKIPPED_CHUNK = 5000;

/**
 * Records the distinct URLs the rules skipped at one level (by their sha256, as crawl_pages keys
 * its URLs), replacing what a previous report of the level had: pagesDiscovered counts each once
 * per crawl, however many levels skipped it. Call it inside the level's admission transaction.
 */
export async function replaceLevelSkipped(trx: Queryable, crawlId: string, depth: number, urls: readonly string[]): Promise<void> {
  await trx.deleteFrom('crawl_skipped_links').where('crawl_id', '=', crawlId).where('depth', '=', depth).execute();
  for (let i = 0; i < urls.length; i += SKIPPED_CHUNK) {
    await sql`
      INSERT INTO crawl_skipped_links (crawl_id, depth, url_hash)
      SELECT ${crawlId}, ${depth}, digest(u, 'sha256') FROM unnest(${urls.slice(i, i + SKIPPED_CHUNK)}::text[]) AS u
      ON CONFLICT DO NOTHING
    `.execute(trx);
  }
}

/** Links the rules skipped anywhere in the crawl, each URL once, leaving out any the crawl took as a page. */
export async function skippedLinksCount(db: Queryable, crawlId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM (
      SELECT url_hash FROM crawl_skipped_links WHERE crawl_id = ${crawlId}
      EXCEPT
      SELECT url_hash FROM crawl_pages WHERE crawl_id = ${crawlId}
    ) s`.execute(db);
  return rows[0]?.n ?? 0;
}

/** Records one level's refusals (address policy, link cap), replacing what a previous report of it had. */
export async function replaceLevelRefusals(trx: Queryable, crawlId: string, depth: number, tallies: readonly RefusalTally[]): Promise<void> {
  await trx.deleteFrom('crawl_refusals').where('crawl_id', '=', crawlId).where('depth', '=', depth).execute();
  for (let i = 0; i < tallies.length; i += INSERT_CHUNK) {
    const chunk = tallies.slice(i, i + INSERT_CHUNK);
    await trx
      .insertInto('crawl_refusals')
      .values(chunk.map((t) => ({ crawl_id: crawlId, depth, hostname: t.hostname, code: t.code, urls: t.urls, samples: t.samples })))
      .execute();
  }
}

export interface CrawlRefusalRow {
  depth: number;
  hostname: string;
  code: string;
  urls: number;
  samples: string[];
}

/** A crawl's refusals by depth, most URLs first. */
export async function crawlRefusals(db: Queryable, crawlId: string): Promise<CrawlRefusalRow[]> {
  return db
    .selectFrom('crawl_refusals')
    .select(['depth', 'hostname', 'code', 'urls', 'samples'])
    .where('crawl_id', '=', crawlId)
    .orderBy('depth')
    .orderBy('urls', 'desc')
    .orderBy('hostname')
    .orderBy('code')
    .execute();
}

export interface CrawlDecisionRow {
  depth: number;
  rule: number;
  action: RuleAction;
  hostname: string;
  links: number;
  samples: string[];
}

/** A crawl's decisions by depth, rule, then most links first. */
export async function crawlDecisions(db: Queryable, crawlId: string): Promise<CrawlDecisionRow[]> {
  return db
    .selectFrom('crawl_decisions')
    .select(['depth', 'rule', 'action', 'hostname', 'links', 'samples'])
    .where('crawl_id', '=', crawlId)
    .orderBy('depth')
    .orderBy('rule')
    .orderBy('links', 'desc')
    .orderBy('hostname')
    .execute();
}

/** URLs of the pages robots.txt kept the crawl from taking, in the order they were discovered. */
export async function robotsSkippedUrls(db: Queryable, crawlId: string): Promise<string[]> {
  const rows = await db.selectFrom('crawl_pages').select('url').where('crawl_id', '=', crawlId).where('skip_reason', '=', 'robots').orderBy('id').execute();
  return rows.map((r) => r.url);
}

export interface DecisionQuery {
  /** host name (punycode, lower-case): matches it and its subdomains at a label boundary */
  domain: string;
  days: number;
  action: RuleAction;
}

// hostname = domain, or ends with '.' || domain. right() rather than LIKE: host names may contain
// '_', which LIKE would read as a wildcard.
function matching(q: DecisionQuery) {
  return sql<boolean>`(d.hostname = ${q.domain} OR right(d.hostname, ${q.domain.length + 1}) = ${'.' + q.domain})
    AND d.action = ${q.action}
    AND c.started_at >= now() - make_interval(days => ${q.days})`;
}

/** The organizations whose crawls have matching decisions: what authorization has to be asked about. */
export async function decisionOrgs(db: Queryable, q: DecisionQuery): Promise<string[]> {
  const { rows } = await sql<{ org_id: string }>`
    SELECT DISTINCT c.org_id FROM crawl_decisions d JOIN crawls c ON c.id = d.crawl_id
    WHERE ${matching(q)}
    ORDER BY c.org_id`.execute(db);
  return rows.map((r) => r.org_id);
}

export interface DecisionAcrossCrawls {
  crawl_id: string;
  org_id: string;
  started_at: Date;
  seeds: string[];
  rules: unknown;
  depth: number;
  rule: number;
  action: RuleAction;
  hostname: string;
  links: number;
}

/** Matching decisions of these organizations' crawls, newest crawl first, at most `limit` rows. */
export async function findDecisions(db: Queryable, q: DecisionQuery & { orgIds: string[]; limit: number }): Promise<DecisionAcrossCrawls[]> {
  if (q.orgIds.length === 0) return [];
  const { rows } = await sql<DecisionAcrossCrawls>`
    SELECT d.crawl_id, c.org_id, c.started_at, c.seeds, c.rules, d.depth, d.rule, d.action, d.hostname, d.links
    FROM crawl_decisions d JOIN crawls c ON c.id = d.crawl_id
    WHERE ${matching(q)} AND c.org_id = ANY(${q.orgIds}::text[])
    ORDER BY c.started_at DESC, c.id, d.depth, d.rule, d.links DESC, d.hostname
    LIMIT ${q.limit}`.execute(db);
  return rows;
}
