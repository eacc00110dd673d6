// The coordination bench's simulated capture workers, in a process of their own as real capture
// workers are (so their Temporal client's work is not counted as the coordinator's): one Temporal
// worker on the capture queue with `slots` activity slots, whose capturePage waits `captureMs`
// (the calibrated stand-in for Chromium, in the bench only), signals hostDone and answers as a
// capture would. Prints {"ready":true} once it polls; on SIGTERM it drains and exits.
//
//   node bench/support-sim-capture-workers.ts <address> <namespace> <captureQueue> <slots> <captureMs>
import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { CapturePageInput, CapturePageResult } from '../src/flow/activities/types.ts';
import { hostDoneSignal } from '../src/flow/workflows/messages.ts';
import { quietRuntime } from '../test/support/quiet-runtime.ts';

function simulatedCapture(captureMs: number): (input: CapturePageInput) => Promise<CapturePageResult> {
  return async (input) => {
    const ctx = Context.current();
    const submittedAt = Date.now();
    await new Promise((r) => setTimeout(r, captureMs));
    const finishedAt = Date.now();
    await ctx.client.workflow
      .getHandle(ctx.info.workflowExecution!.workflowId)
      .signal(hostDoneSignal, { index: input.index, attempt: input.attempt, submittedAt, finishedAt });
    return { kind: 'visited', submittedAt, finishedAt, status: 'captured', manifest: true };
  };
}

async function main(address: string, namespace: string, taskQueue: string, slots: number, captureMs: number): Promise<void> {
  quietRuntime();
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    activities: { capturePage: simulatedCapture(captureMs) },
    maxConcurrentActivityTaskExecutions: slots,
  });
  const running = worker.run();
  console.log(JSON.stringify({ ready: true }));
  process.once('SIGTERM', () => worker.shutdown());
  await running;
  await connection.close();
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [address, namespace, queue, slots, captureMs] = process.argv.slice(2);
  main(address!, namespace!, queue!, Number(slots), Number(captureMs)).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
