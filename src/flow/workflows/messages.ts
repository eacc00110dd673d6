// The capture tier's workflow messages and payloads, defined once: the level and slice workflows
// set their handlers with these definitions, and the receiver, the activities and the tests use
// the same ones to signal and query them.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { DispatchBody, HostProgress } from '../../domain/contract.ts';
import type { CaptureBehaviors } from '../../domain/behavior-budget.ts';
import type { FlowKnobs } from '../knobs.ts';
import type { StoredPayload } from '../../domain/wacz/payload-index.ts';

export interface LevelInput {
  dispatch: DispatchBody;
  knobs: FlowKnobs;
  /** the task queue capturePage activities are scheduled on */
  captureQueue: string;
  /** how often the ledger hears a heartbeat while the level is captured */
  heartbeatIntervalMs: number;
  /** when the receiver accepted the dispatch (ms since the epoch) */
  receivedAt: number;
  /** the slices of earlier runs of this level (closed): what they captured is not captured again */
  priorSlices?: string[];
  /** default: the report is tried until the level's deadline */
  reportRetry?: { attempts: number; baseDelayMs: number };
  /** set when the dispatch's pages were too many for one payload (src/domain/dispatch-parts.ts):
   * `dispatch.pages` holds the first part, dispatchPartSignal brings the others */
  parts?: { id: string; count: number };
}

/** One part after the first of a dispatch sent in parts, its pages in dispatch order. */
export interface DispatchPart {
  id: string;
  index: number;
  pages: DispatchBody['pages'];
}

export type LevelPhase = 'capturing' | 'reporting' | 'reported' | 'report-failed' | 'dropped' | 'failed';

export interface ReportAttempt {
  at: string;
  status?: number;
  error?: string;
  body?: string;
}

export interface ReportOutcome {
  delivered: boolean;
  status?: number;
  attempts: ReportAttempt[];
}

export interface LevelState {
  phase: LevelPhase;
  /** the latest dispatch, its pages left out */
  dispatch: DispatchBody;
  /** how many pages the level has */
  pages: number;
  /** the slice workflows' ids, in slice order */
  slices: string[];
  outcome?: ReportOutcome;
  error?: string;
}

/** One page as a slice settled it: compact (the report activity adds taskId and manifestKey). */
export interface PageOutcome {
  index: number;
  url: string;
  status: 'captured' | 'failed' | 'skipped';
  skipReason?: 'robots';
  /** true when the capture wrote its manifest (the report then names it) */
  manifest?: boolean;
  /** the version the store gave the manifest, when it keeps versions */
  manifestVersion?: string;
  manifestError?: string;
  finalUrl?: string;
  /** ms since the epoch */
  submittedAt?: number;
  finishedAt?: number;
}

export interface SliceHost {
  host: string;
  delayMs: number;
  lastFinishedAt?: number;
}

export interface SliceInput {
  crawlId: string;
  depth: number;
  pages: { index: number; url: string; follow: boolean }[];
  slots: number;
  perHostDelayMs: number;
  /** per host: earliest next submit (ms) — the dispatch's notBefore, or an earlier slice's finish */
  notBefore: Record<string, number>;
  formats: DispatchBody['formats'];
  signing: boolean;
  /** the dispatch's qa: each capture scored against its replay */
  qa?: boolean;
  /** in-page behaviors after load; absent in a slice started before they were (its pages run none) */
  behaviors?: CaptureBehaviors;
  /** where the slice's keys go (`${prefix}/<taskId>…`) */
  prefix: string;
  knobs: FlowKnobs;
  captureQueue: string;
  /** pages must start by this (ms); a visit still running at finishBy is torn down */
  startBy: number;
  finishBy: number;
  /** payloads earlier pages of the crawl stored (src/domain/wacz/dedup.ts), bounded */
  known?: StoredPayload[];
}

export interface SliceResult {
  pages: PageOutcome[];
  hosts: SliceHost[];
  /** the payloads the slice knew of at its end, its own included (bounded): later slices and levels revisit them */
  payloads?: StoredPayload[];
}

export interface SliceProgress {
  pagesTotal: number;
  pagesDone: number;
  pagesInFlight: number;
  hosts: HostProgress[];
}

/** What a capture worker tells the slice the moment the host's part of a capture is over. */
export interface HostDone {
  index: number;
  attempt: number;
  submittedAt: number;
  finishedAt: number;
}

/** What a capture worker tells the slice as a capture starts: the task queue of that worker
 * alone, where the slice may hand over the capture to follow it (slot lead). */
export interface CaptureStarted {
  index: number;
  attempt: number;
  workerQueue: string;
}

export const redispatchSignal = defineSignal<[LevelInput]>('redispatch');
export const dispatchPartSignal = defineSignal<[DispatchPart]>('dispatchPart');
export const levelStateQuery = defineQuery<LevelState>('levelState');
export const hostDoneSignal = defineSignal<[HostDone]>('hostDone');
export const captureStartedSignal = defineSignal<[CaptureStarted]>('captureStarted');
export const sliceProgressQuery = defineQuery<SliceProgress>('sliceProgress');
