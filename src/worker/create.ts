// Builds the worker: every workflow in src/workflows and every activity from createActivities.
// Shared by `npm run worker` and the integration tests (which pass a prebuilt bundle).
import { fileURLToPath } from 'node:url';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities/index.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** a bundle made once by bundleWorkflowCode (tests); otherwise src/workflows is bundled now */
  workflowBundlePath?: string;
  /** test knob: finish quickly when shut down */
  shutdownGraceTime?: string;
}

export async function createWorker(opts: CreateWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities: createActivities(opts.deps),
    ...(opts.workflowBundlePath !== undefined ? { workflowBundle: { codePath: opts.workflowBundlePath } } : { workflowsPath: WORKFLOWS_PATH }),
    ...(opts.shutdownGraceTime !== undefined ? { shutdownGraceTime: opts.shutdownGraceTime as never } : {}),
  });
}
