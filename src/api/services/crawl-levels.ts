// What happens to a crawl level after its dispatch (design.md "The webhook contract"): the capture
// flow's report and heartbeats, each already bound to the dispatch by levelCapabilityGate, and what
// an operator reads while it runs (progress, the pacing audit). The routes in
// routes/level-reports.ts and routes/crawl-progress.ts read the request, call this and reply.
//
// A report is stored first and the workflow is then signalled with a reference; when the signal
// cannot be sent the reporter gets 503 and reports again (the stored row is replaced, at most
// MAX_REPORTS_PER_LEVEL times), so nothing reported is lost on a Temporal fault.
import type { OpenFgaClient } from '@openfga/sdk';
import { WorkflowNotFoundError, type Client as TemporalClient } from '@temporalio/client';
import type { FastifyBaseLogger } from 'fastify';
import type { Static } from 'typebox';
import { crawlWorkflowId, QUERIES, SIGNALS } from '../../../temporal.config.ts';
import type { Config } from '../../config/env.ts';
import type { Db } from '../../db/connect.ts';
import type { CrawlProgress } from '../../domain/crawl.ts';
import { ConflictError, ServiceUnavailableError } from '../errors.ts';
import type { Identity } from '../../domain/identity.ts';
import { MAX_REPORTS_PER_LEVEL } from '../../domain/level-dispatch.ts';
import { LIVENESS_DEFAULTS, type LevelHeartbeat } from '../../domain/liveness.ts';
import { busiestHosts, progressView, type ProgressView } from '../../domain/progress.ts';
import { getCrawl, upsertLevelReport } from '../../store/crawls.ts';
import { releaseHeartbeatTurn, takeHeartbeatTurn, takeReportSlot, type LevelDispatch } from '../../store/level-dispatches.ts';
import { levelCounts, pacingAudit } from '../../store/progress.ts';
import type { LevelReported, ReportRefused } from '../../workflows/crawl.ts';
import { submittableCrawl } from '../crawl-access.ts';
import type { Heartbeat, LevelReport } from '../schemas/levels.ts';
import type { Pacing } from '../schemas/crawl-progress.ts';

/** How long signalling the workflow may take before the caller gets 503. */
export const SIGNAL_DEADLINE_MS = 10_000;
/** How long the progress query may take before the answer comes from the ledger alone. */
export const QUERY_DEADLINE_MS = 5_000;

/**
 * The least time between two heartbeats of a level passed on to the workflow: a quarter of the
 * liveness window, so a level whose flow is alive is never taken for silent, while a flow that
 * beats every few seconds (or floods) adds at most a few signals a minute to the history.
 */
export function heartbeatSignalGapMs(config: Pick<Config, 'crawl'>): number {
  return ((config.crawl.livenessWindowSeconds ?? LIVENESS_DEFAULTS.windowSeconds) * 1000) / 4;
}

export interface CrawlLevelServiceDeps {
  config: Config;
  db: Db;
  fga: OpenFgaClient;
  temporal: TemporalClient;
}

export interface CrawlLevelService {
  /** Stores the level's report and tells the workflow; 409 when the crawl or level is closed. */
  report(dispatch: LevelDispatch, reporter: Identity, body: Static<typeof LevelReport>): Promise<{ reportId: string }>;
  /**
   * Passes the flow's heartbeat on to the workflow unless one was passed on within a quarter of
   * the liveness window (then passedOn is false); 409 when the crawl is not running.
   */
  heartbeat(dispatch: LevelDispatch, body: Static<typeof Heartbeat>): Promise<{ passedOn: boolean }>;
  /** Tells the workflow that a report carrying the level's capability had its token refused. */
  reportRefused(crawlId: string, depth: number, reason: string): Promise<void>;
  /** The workflow's progress merged with the ledger; 404 unless the caller may submit. */
  progress(identity: Identity, id: string, log: FastifyBaseLogger): Promise<ProgressView>;
  /** The spacing every host really got; 404 unless the caller may submit. */
  pacing(identity: Identity, id: string): Promise<Static<typeof Pacing>>;
}

export function createCrawlLevelService(deps: CrawlLevelServiceDeps): CrawlLevelService {
  const { db, fga, temporal } = deps;
  const heartbeatGapMs = heartbeatSignalGapMs(deps.config);
  const workflow = (crawlId: string) => temporal.workflow.getHandle(crawlWorkflowId(crawlId));
  const withDeadline = <T>(ms: number, fn: () => Promise<T>): Promise<T> => temporal.withDeadline(Date.now() + ms, fn);

  /** A signal to a running crawl: a workflow that is gone is 409, an unreachable Temporal 503. */
  const signal = async (crawlId: string, name: string, arg: unknown, unavailable: string, what: string): Promise<void> => {
    try {
      await withDeadline(SIGNAL_DEADLINE_MS, () => workflow(crawlId).signal(name, arg));
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new ConflictError('the crawl is not running');
      throw new ServiceUnavailableError(unavailable, `could not signal crawl ${crawlId} ${what}`, { cause: err });
    }
  };

  const mustBeRunning = async (crawlId: string): Promise<void> => {
    const crawl = await getCrawl(db, crawlId);
    if (crawl === undefined || crawl.state !== 'running') throw new ConflictError('the crawl is not running', { state: crawl?.state ?? null });
  };

  return {
    async report(dispatch, reporter, body) {
      const { crawlId, depth } = dispatch;
      await mustBeRunning(crawlId);
      if (Date.now() > dispatch.deadline.getTime()) throw new ConflictError(`level ${depth} is past its deadline (${dispatch.deadline.toISOString()})`);
      const stored = await db.transaction().execute(async (trx) => {
        const n = await takeReportSlot(trx, crawlId, depth, MAX_REPORTS_PER_LEVEL);
        if (n === null) return null;
        return upsertLevelReport(trx, crawlId, depth, body, reporter.subject);
      });
      if (stored === null) throw new ConflictError(`level ${depth} was already reported ${MAX_REPORTS_PER_LEVEL} times; no more reports of it are taken`);
      const reported: LevelReported = { depth, reportId: stored.reportId };
      await signal(
        crawlId,
        SIGNALS.levelReported,
        reported,
        'the report was stored but the crawl could not be told: Temporal is unavailable; report again',
        `that level ${depth} was reported`,
      );
      return { reportId: stored.reportId };
    },

    async heartbeat(dispatch, body) {
      const { crawlId, depth } = dispatch;
      await mustBeRunning(crawlId);
      if (!(await takeHeartbeatTurn(db, crawlId, depth, heartbeatGapMs))) return { passedOn: false };
      // every signal stays in the workflow's history: only the busiest hosts are passed on
      const beat: LevelHeartbeat = { ...body, hosts: busiestHosts(body.hosts), receivedAt: new Date().toISOString() };
      try {
        await signal(crawlId, SIGNALS.levelHeartbeat, beat, 'Temporal is unavailable; the heartbeat was not passed on', `a heartbeat of level ${depth}`);
      } catch (err) {
        await releaseHeartbeatTurn(db, crawlId, depth);
        throw err;
      }
      return { passedOn: true };
    },

    async reportRefused(crawlId, depth, reason) {
      const refused: ReportRefused = { depth, reason };
      await withDeadline(SIGNAL_DEADLINE_MS, () => workflow(crawlId).signal(SIGNALS.reportRefused, refused));
    },

    async progress(identity, id, log) {
      const crawl = await submittableCrawl(db, fga, identity, id);
      let live: CrawlProgress | null = null;
      if (crawl.state === 'running') {
        try {
          live = await withDeadline(QUERY_DEADLINE_MS, () => workflow(crawl.id).query<CrawlProgress>(QUERIES.progress));
        } catch (err) {
          log.warn({ err, crawlId: crawl.id }, 'progress query failed; answering from the ledger');
        }
      }
      const facts = {
        id: crawl.id,
        state: crawl.state,
        stopReason: crawl.stop_reason,
        failure: crawl.failure,
        maxDepth: crawl.max_depth,
        depthReached: crawl.depth_reached,
      };
      return progressView(facts, await levelCounts(db, crawl.id), live);
    },

    async pacing(identity, id) {
      const crawl = await submittableCrawl(db, fga, identity, id);
      const hosts = await pacingAudit(db, crawl.id, crawl.per_host_delay_ms);
      return { crawlId: crawl.id, perHostDelayMs: crawl.per_host_delay_ms, violations: hosts.reduce((n, h) => n + h.violations, 0), hosts };
    },
  };
}
