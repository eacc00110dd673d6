// Every workflow the worker runs. Bundled by the worker (and once by the test global setup):
// nothing reachable from here may do I/O or import Node builtins.
export { crawl } from './crawl.ts';
export type { CrawlWorkflowInput, CrawlWorkflowResult } from './crawl.ts';
export { cancelSignal, levelHeartbeatSignal, levelReportedSignal, progressQuery, reportRefusedSignal } from './messages.ts';
export type { CancelRequest, LevelReported, ReportRefused } from './messages.ts';
export { outboxDrain } from './outbox-drain.ts';
export { reconcile } from './reconcile.ts';
export { indexPending } from './index-pending.ts';
export type { ReconcileWorkflowResult } from './reconcile.ts';
