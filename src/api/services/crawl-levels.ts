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
import type { SignalDefinition } from '@temporalio/workflow';
import type { FastifyBaseLogger } from 'fastify';
import type { Static } from 'typebox';
import { crawlWorkflowId } from '../../../temporal.config.ts';
import type { Config } from '../../config/env.ts';
import type { Db } from '../../db/connect.ts';
import type { CrawlProgress } from '../../domain/crawl.ts';
import { ConflictError, ServiceUnavailableError } from '../errors.ts';
import type { Identity } from '../../domain/identity.ts';
import { heartbeatGapMs } from '../../domain/level.ts';
import type { LevelHeartbeat } from '../../domain/liveness.ts';
import { busiestHosts, progressView, type ProgressView } from '../../domain/progress.ts';
import { passHeartbeat, storeReport, type LevelDispatch } from '../../ledger/level.ts';
import { getCrawl } from '../../store/crawls.ts';
import { levelCounts, pacingAudit } from '../../store/progress.ts';
import {
  levelHeartbeatSignal,
  levelReportedSignal,
  progressQuery,
  reportRefusedSignal,
  type LevelReported,
  type ReportRefused,
} from '../../workflows/messages.ts';
import { submittableCrawl } from '../crawl-access.ts';
import type { Heartbeat, LevelReport } from '../schemas/levels.ts';
import type { Pacing } from '../schemas/crawl-progress.ts';

/** How long signalling the workflow may take before the caller gets 503. */
export const SIGNAL_DEADLINE_MS = 10_000;
/** How long the progress query may take before the answer comes from the ledger alone. */
export const QUERY_DEADLINE_MS = 5_000;

/** The least time between two heartbeats of a level passed on to the workflow (domain/level.ts heartbeatGapMs). */
export function heartbeatSignalGapMs(config: Pick<Config, 'crawl'>): number {
  return heartbeatGapMs(config.crawl.livenessWindowSeconds);
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
  const signal = async <T>(crawlId: string, message: SignalDefinition<[T]>, arg: T, unavailable: string, what: string): Promise<void> => {
    try {
      await withDeadline(SIGNAL_DEADLINE_MS, () => workflow(crawlId).signal(message, arg));
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
      const stored = await storeReport(db, dispatch, body, reporter.subject);
      const reported: LevelReported = { depth, reportId: stored.reportId };
      const unavailable = 'the report was stored but the crawl could not be told: Temporal is unavailable; report again';
      await signal(crawlId, levelReportedSignal, reported, unavailable, `that level ${depth} was reported`);
      return { reportId: stored.reportId };
    },

    async heartbeat(dispatch, body) {
      const { crawlId, depth } = dispatch;
      await mustBeRunning(crawlId);
      // every signal stays in the workflow's history: only the busiest hosts are passed on
      const beat = (): LevelHeartbeat => ({ ...body, hosts: busiestHosts(body.hosts), receivedAt: new Date().toISOString() });
      const unavailable = 'Temporal is unavailable; the heartbeat was not passed on';
      const passedOn = await passHeartbeat(db, dispatch, heartbeatGapMs, () =>
        signal(crawlId, levelHeartbeatSignal, beat(), unavailable, `a heartbeat of level ${depth}`),
      );
      return { passedOn };
    },

    async reportRefused(crawlId, depth, reason) {
      const refused: ReportRefused = { depth, reason };
      await withDeadline(SIGNAL_DEADLINE_MS, () => workflow(crawlId).signal(reportRefusedSignal, refused));
    },

    async progress(identity, id, log) {
      const crawl = await submittableCrawl(db, fga, identity, id);
      let live: CrawlProgress | null = null;
      if (crawl.state === 'running') {
        try {
          live = await withDeadline(QUERY_DEADLINE_MS, () => workflow(crawl.id).query(progressQuery));
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
