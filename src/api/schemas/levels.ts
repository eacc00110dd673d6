// What the capture flow sends about one level: its report (routes/level-reports.ts) and its
// heartbeats (routes/crawl-progress.ts). The bodies are the webhook contract's own schemas
// (src/domain/contract.ts); only the route's own parts are defined here.
import Type from 'typebox';
import { Heartbeat, HostProgressSchema, LevelReport } from '../../domain/contract.ts';
import { CRAWL_LIMITS } from '../../domain/crawl.ts';
import { Uuid } from './common.ts';

const Depth = Type.Integer({ minimum: 0, maximum: CRAWL_LIMITS.maxDepth });

/** `/api/crawls/:id/levels/:depth` */
export const LevelParams = Type.Object({ id: Uuid, depth: Depth }, { additionalProperties: false });

/** The report route's body: LevelReportBody, as the contract defines it. */
export { LevelReport };

export const ReportAccepted = Type.Object({ reportId: Type.String() }, { additionalProperties: false });

/** The heartbeat route's body: HeartbeatBody, as the contract defines it. */
export { Heartbeat, HostProgressSchema as HostProgress };

export const HeartbeatAccepted = Type.Object(
  {
    accepted: Type.Boolean(),
    passedOn: Type.Boolean({ description: 'whether the workflow was signalled: at most one heartbeat per quarter of the liveness window is passed on' }),
  },
  { additionalProperties: false },
);
