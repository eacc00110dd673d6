// The dispatchLevel activity: POSTs one level to the capture flow (the webhook contract). The level
// is recorded as dispatched before the POST, so a report that beats the response is accepted.
import { ApplicationFailure, log } from '@temporalio/activity';
import type { CaptureFormat, Config } from '../config/env.ts';
import type { Db } from '../db/connect.ts';
import type { Crawl } from '../db/types.ts';
import type { DispatchBody } from '../domain/contract.ts';
import { computeNotBefore, readsLinks } from '../domain/crawl.ts';
import { openLevel } from '../ledger/level.ts';
import { getCrawl, markDispatched } from '../store/crawls.ts';
import { hostPacing } from '../store/level-dispatches.ts';
import { lastFinishByHost, levelPages, type LevelPage } from '../store/pages.ts';
import { NON_RETRYABLE } from '../../temporal.config.ts';

export interface DispatchInput {
  crawlId: string;
  depth: number;
  /** how long the level may take (the workflow's level timeout); default the configured one */
  levelTimeoutSeconds?: number;
}

export interface DispatchResult {
  depth: number;
  pages: number;
  follow: number;
  hosts: number;
  /** the level's deadline as sent (ms since the epoch): no re-report is admitted past it
   * (absent in histories recorded before it existed) */
  deadline?: number;
}

export interface DispatchDeps {
  config: Config;
  db: Db;
  fetch?: typeof fetch;
}

type Webhook = NonNullable<Config['crawl']['webhook']>;

/** What the dispatch carries beyond the crawl row: minted, planned or read for this attempt. */
interface LevelPlan {
  depth: number;
  pages: LevelPage[];
  notBefore: Record<string, string>;
  capability: string;
  prefix: string;
  deadline: Date;
}

/** 401/403/400…: the flow refuses this request as it is; sending it again cannot help. */
const REFUSED_STATUSES = [400, 401, 403, 404, 422];

export function reportUrl(publicUrl: string, crawlId: string, depth: number): string {
  return `${publicUrl.replace(/\/+$/, '')}/api/crawls/${crawlId}/levels/${depth}`;
}

/** The crawl's row, or a final failure: it is gone, or finished by hand (or by the API's dead-row recovery). */
async function runningCrawl(db: Db, crawlId: string): Promise<Crawl> {
  const crawl = await getCrawl(db, crawlId);
  if (crawl === undefined) throw ApplicationFailure.nonRetryable(`crawl ${crawlId} does not exist`, NON_RETRYABLE.noCrawl);
  if (crawl.state !== 'running') throw ApplicationFailure.nonRetryable(`crawl ${crawlId} is ${crawl.state}, not running`, NON_RETRYABLE.noCrawl);
  return crawl;
}

/**
 * When each host may be fetched again: from the last finish and the delay the flow kept
 * (Crawl-delay) per host, as the ledger recorded them — a flow restarted since has forgotten both.
 */
async function hostsNotBefore(db: Db, crawl: Crawl, hosts: string[]): Promise<Record<string, string>> {
  const [finishes, recorded] = await Promise.all([lastFinishByHost(db, crawl.id, hosts), hostPacing(db, crawl.id, hosts)]);
  for (const [host, h] of recorded) {
    const seen = finishes.get(host);
    if (h.lastFinishedAt !== null && (seen === undefined || h.lastFinishedAt > seen)) finishes.set(host, h.lastFinishedAt);
  }
  return computeNotBefore(finishes, crawl.per_host_delay_ms, hosts, new Map([...recorded].map(([host, h]) => [host, h.delayMs])));
}

function dispatchBody(publicUrl: string, crawl: Crawl, plan: LevelPlan): DispatchBody {
  const levelUrl = reportUrl(publicUrl, crawl.id, plan.depth);
  return {
    crawlId: crawl.id,
    depth: plan.depth,
    orgId: crawl.org_id,
    reportUrl: levelUrl,
    heartbeatUrl: `${levelUrl}/heartbeat`,
    formats: crawl.formats as CaptureFormat[],
    signing: crawl.signing,
    perHostDelayMs: crawl.per_host_delay_ms,
    hostParallelism: crawl.host_parallelism,
    behaviors: { seconds: crawl.behaviors_seconds, siteSpecific: crawl.site_behaviors },
    ...(crawl.qa ? { qa: true } : {}),
    notBefore: plan.notBefore,
    pages: plan.pages.map((p) => ({ url: p.url, follow: readsLinks(p.action, plan.depth, crawl.max_depth) })),
    capability: plan.capability,
    artifactPrefix: plan.prefix,
    deadline: plan.deadline.toISOString(),
  };
}

/** The POST itself; a refusal is final, anything else (unreachable, 5xx) is retried. */
async function postDispatch(doFetch: typeof fetch, hook: Webhook, body: DispatchBody): Promise<void> {
  let res: Response;
  try {
    res = await doFetch(hook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${hook.token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new Error(`webhook ${hook.url} unreachable: ${(err as Error).message}`);
  }
  const text = await res.text().catch(() => '');
  if (res.ok) return;
  const msg = `webhook ${hook.url} answered ${res.status}: ${text.slice(0, 300)}`;
  if (REFUSED_STATUSES.includes(res.status)) throw ApplicationFailure.nonRetryable(msg, NON_RETRYABLE.dispatchRejected);
  throw new Error(msg);
}

export function createDispatchLevel(deps: DispatchDeps): (input: DispatchInput) => Promise<DispatchResult> {
  const { config, db } = deps;
  const doFetch = deps.fetch ?? fetch;
  return async function dispatchLevel(input) {
    const hook = config.crawl.webhook;
    if (hook === undefined) throw ApplicationFailure.nonRetryable('crawl webhook is not configured', NON_RETRYABLE.dispatchRejected);
    const crawl = await runningCrawl(db, input.crawlId);
    const pages = await levelPages(db, crawl.id, input.depth);
    const hosts = [...new Set(pages.map((p) => p.host))];
    // A fresh capability per attempt; the earlier ones stay valid for the level, since an attempt
    // whose answer was lost may still be what the flow is working on.
    const level = await openLevel(db, { crawlId: crawl.id, depth: input.depth, timeoutSeconds: input.levelTimeoutSeconds ?? config.crawl.levelTimeoutSeconds });
    const plan: LevelPlan = {
      depth: input.depth,
      pages,
      notBefore: await hostsNotBefore(db, crawl, hosts),
      capability: level.capability,
      prefix: level.artifactPrefix,
      deadline: level.deadline,
    };
    const body = dispatchBody(config.api.publicUrl, crawl, plan);
    await markDispatched(db, crawl.id, input.depth);
    await postDispatch(doFetch, hook, body);
    log.info('level dispatched', { crawlId: crawl.id, depth: input.depth, pages: pages.length });
    return {
      depth: input.depth,
      pages: pages.length,
      follow: body.pages.filter((p) => p.follow).length,
      hosts: hosts.length,
      deadline: plan.deadline.getTime(),
    };
  };
}
