// What the capture flow sends about one level: its report (routes/level-reports.ts) and its
// heartbeats (routes/crawl-progress.ts). The bodies are src/domain/contract.ts's LevelReportBody
// and HeartbeatBody.
import Type from 'typebox';
import { CRAWL_LIMITS } from '../../domain/crawl.ts';
import { MAX_RECORDED_DELAY_MS } from '../../domain/level-dispatch.ts';
import { Nullable, Uuid } from './common.ts';

export const MAX_REPORT_PAGES = 100_000;
const MAX_URL = 8192;
const MAX_HOSTS = 10_000;
const MAX_PAGES = 1_000_000;

const Depth = Type.Integer({ minimum: 0, maximum: CRAWL_LIMITS.maxDepth });

/** `/api/crawls/:id/levels/:depth` */
export const LevelParams = Type.Object({ id: Uuid, depth: Depth }, { additionalProperties: false });

const PageReport = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: MAX_URL }),
    status: Type.Unsafe<'captured' | 'failed' | 'skipped'>({ type: 'string', enum: ['captured', 'failed', 'skipped'] }),
    skipReason: Type.Optional(Type.Unsafe<'robots'>({ type: 'string', enum: ['robots'] })),
    taskId: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    manifestKey: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    manifestError: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    finalUrl: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL })),
    submittedAt: Type.Optional(Type.String({ format: 'date-time' })),
    finishedAt: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

const HostReport = Type.Object(
  {
    // host name (≤ 253) with a port
    host: Type.String({ minLength: 1, maxLength: 260 }),
    delayMs: Type.Integer({ minimum: 0, maximum: MAX_RECORDED_DELAY_MS }),
    lastFinishedAt: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

/** The report route's body: LevelReportBody. */
export const LevelReport = Type.Object(
  {
    depth: Depth,
    pages: Type.Array(PageReport, { maxItems: MAX_REPORT_PAGES }),
    hosts: Type.Optional(
      Type.Array(HostReport, { maxItems: MAX_REPORT_PAGES, description: 'per host: the delay the flow kept (perHostDelayMs or a longer Crawl-delay) and its last finish' }),
    ),
  },
  { additionalProperties: false },
);

export const ReportAccepted = Type.Object({ reportId: Type.String() }, { additionalProperties: false });

const Count = Type.Integer({ minimum: 0, maximum: MAX_PAGES });

export const HostProgress = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 260 }),
    queued: Count,
    inFlight: Type.Integer({ minimum: 0, maximum: 1 }),
    nextAllowedAt: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

/** The heartbeat route's body: HeartbeatBody. */
export const Heartbeat = Type.Object(
  { depth: Depth, pagesTotal: Count, pagesDone: Count, pagesInFlight: Count, hosts: Type.Array(HostProgress, { maxItems: MAX_HOSTS }) },
  { additionalProperties: false },
);

export const HeartbeatAccepted = Type.Object(
  {
    accepted: Type.Boolean(),
    passedOn: Type.Boolean({ description: 'whether the workflow was signalled: at most one heartbeat per quarter of the liveness window is passed on' }),
  },
  { additionalProperties: false },
);
