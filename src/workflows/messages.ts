// Every message the crawl workflow takes, defined once: the workflow sets its handlers on these,
// and the API, the tests and operators' commands signal and query through the same definitions,
// so a name or a payload type cannot drift between the two sides. The names are in the history of
// every running crawl: renaming one breaks them.
//
// Deterministic and I/O-free: it is bundled with the workflows and imported by the API.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { CrawlProgress } from '../domain/crawl.ts';
import type { LevelHeartbeat } from '../domain/liveness.ts';
import type { LevelReported } from './report-queue.ts';

export type { LevelReported } from './report-queue.ts';

export interface ReportRefused {
  depth: number;
  reason: string;
}

export interface CancelRequest {
  reason?: string;
}

/** A level's report was stored (crawl_level_reports): admit it. At-least-once; reportId deduplicates. */
export const levelReportedSignal = defineSignal<[LevelReported]>('levelReported');
/** Stop the crawl: it finishes as failed, `cancelled: <reason>`. */
export const cancelSignal = defineSignal<[CancelRequest?]>('cancel');
/** The capture flow is still working on the level (throttled by the API). */
export const levelHeartbeatSignal = defineSignal<[LevelHeartbeat]>('levelHeartbeat');
/** A report carried the level's capability but the API refused its token: no report will come. */
export const reportRefusedSignal = defineSignal<[ReportRefused]>('reportRefused');
/** Where the crawl is, level by level, as GET /api/crawls/:id/progress merges it with the ledger. */
export const progressQuery = defineQuery<CrawlProgress>('progress');
