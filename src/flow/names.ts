// Names the capture tier's processes share: the receiver, the level workflow, the capture workers
// and operators' commands. The capture tier is another system than the ledger: its workflows run
// in their own namespace (CAPTURE_FLOW_TEMPORAL_NAMESPACE) on their own task queues.
export const FLOW_TASK_QUEUE = 'capture-flow';
export const CAPTURE_TASK_QUEUE = 'capture';
export const FLOW_NAMESPACE = 'capture-flow';

export const LEVEL_WORKFLOW = 'captureLevel';
export const SLICE_WORKFLOW = 'captureSlice';

/** One level workflow per crawl and depth: a dispatch repeated or sent again after a silence
 * reaches the run already capturing that level (signal-with-start), never a second one. */
export const levelWorkflowId = (crawlId: string, depth: number): string => `capture-level-${crawlId}-${depth}`;
export const sliceWorkflowId = (levelId: string, slice: number): string => `${levelId}-slice-${slice}`;

/** The error type sendReport fails with when the ledger's answer is final (a 4xx): not retried. */
export const REPORT_FINAL = 'ReportFinal';
