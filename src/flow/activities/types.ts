// The capture tier's activity contracts: what a slice asks a capture worker to do with one page,
// and what the flow worker's report and heartbeat activities take. Shared by the workflows (as
// types) and the activity factories.
import type { CaptureFormat } from '../../domain/contract.ts';
import type { StoredPayload } from '../../domain/wacz/payload-index.ts';
import type { CaptureBehaviors } from '../../domain/behavior-budget.ts';
import type { FlowKnobs } from '../knobs.ts';
import type { ReportOutcome } from '../workflows/messages.ts';

export interface CapturePageInput {
  crawlId: string;
  depth: number;
  index: number;
  attempt: number;
  url: string;
  follow: boolean;
  formats: CaptureFormat[];
  signing: boolean;
  /** score the capture against its own replay, and capture once more one that falls short */
  qa?: boolean;
  /** in-page behaviors after load (absent: none) */
  behaviors?: CaptureBehaviors;
  prefix: string;
  knobs: FlowKnobs;
  /** the host's last finish the slice knows of (ms), and the delay it keeps on the host: a
   * robots.txt Crawl-delay learnt now that asks for more is waited out before the visit */
  lastFinishedAt?: number;
  delayMs: number;
  /** no submit before this (ms): the slice hands a capture over ahead of its host's ready time */
  startAt?: number;
  /** handed over behind this capture of the slice (on the worker that runs it): no submit
   * before its host's part is over */
  after?: { index: number; attempt: number };
  /** no visit starts after this (ms); a visit still running at finishBy is torn down */
  startBy: number;
  finishBy: number;
  /** payloads earlier pages of the crawl stored (bounded, DEDUP_LIMITS.knownPerCapture): a
   * response with one of them is written as a revisit of it */
  known?: StoredPayload[];
}

export type CapturePageResult =
  | { kind: 'skipped'; crawlDelayMs?: number }
  | { kind: 'too-late'; crawlDelayMs?: number; readyAt: number }
  | {
      kind: 'visited';
      crawlDelayMs?: number;
      submittedAt: number;
      finishedAt: number;
      status: 'captured' | 'failed';
      manifest: boolean;
      /** the version the store gave the manifest (a versioned bucket): reported, and the only one the ledger reads */
      manifestVersion?: string;
      manifestError?: string;
      finalUrl?: string;
      /** payloads this capture's WACZ stored in full (bounded), and the digests it wrote as revisits */
      stored?: StoredPayload[];
      revisited?: string[];
    };

export interface LevelTarget {
  crawlId: string;
  depth: number;
  orgId: string;
  capability?: string;
  /** keys are `${prefix}/<taskId>…` */
  prefix: string;
}

export interface SendReportInput extends LevelTarget {
  reportUrl: string;
  /** the slices whose results make the report */
  slices: string[];
}

export interface SendHeartbeatInput extends LevelTarget {
  heartbeatUrl: string;
  pagesTotal: number;
  /** pages settled in slices that have finished, and the slices still running (queried) */
  pagesDoneBefore: number;
  running: string[];
}

export interface FlowActivities {
  sendReport(input: SendReportInput): Promise<ReportOutcome>;
  sendHeartbeat(input: SendHeartbeatInput): Promise<boolean>;
  /** the page URLs these slices captured (a manifest was written): an earlier run's work */
  capturedPages(input: { slices: string[] }): Promise<string[]>;
  /** the payloads the crawl's level at `depth` knew of when its slices ended (none if it cannot be read) */
  priorPayloads(input: { crawlId: string; depth: number }): Promise<StoredPayload[]>;
}

export interface CaptureActivities {
  capturePage(input: CapturePageInput): Promise<CapturePageResult>;
}
