// The crawl workflow: one per crawl, id crawl-<crawlId> (design.md "Temporal").
//
//   dispatchLevel → wait for levelReported (durable timer: a level never reported fails the
//   crawl) → admitLevel → deliverTuples → next level, or stop with completed / max_depth /
//   max_pages / failed → finishCrawl.
//
// Whatever happens — a dispatch that keeps failing, a lost level, an admission that cannot be
// done, a cancel signal, the workflow itself being cancelled — the row is finished, so a dead
// crawl never blocks the next one. The row is the outcome; this workflow only drives it. The
// state and the steps are CrawlRun's (crawl-run.ts); the messages are messages.ts's.
//
// Deterministic: no I/O here, activities imported as types only.
import { setHandler } from '@temporalio/workflow';
import { CrawlRun } from './crawl-run.ts';
import type { CrawlOutcome, CrawlWorkflowInput, CrawlWorkflowResult } from './crawl-types.ts';
import { cancelSignal, levelHeartbeatSignal, levelReportedSignal, progressQuery, reportRefusedSignal } from './messages.ts';

export type { CrawlWorkflowInput, CrawlWorkflowResult } from './crawl-types.ts';

export async function crawl(input: CrawlWorkflowInput): Promise<CrawlWorkflowResult> {
  const run = new CrawlRun(input);
  setHandler(levelReportedSignal, (report) => run.onLevelReported(report));
  setHandler(levelHeartbeatSignal, (hb) => run.onHeartbeat(hb));
  setHandler(reportRefusedSignal, (refused) => run.onReportRefused(refused));
  setHandler(cancelSignal, (request) => run.onCancel(request));
  setHandler(progressQuery, () => run.progress);

  let outcome: CrawlOutcome;
  try {
    const begin = await run.begin();
    if (!begin.running) return await run.exitAbsent();
    outcome = await run.levels(begin.maxDepth);
  } catch (err) {
    outcome = run.failedBy(err);
  }
  return run.finish(outcome);
}
