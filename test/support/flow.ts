// The reference capture flow as the tests run it: the receiver and flow worker on a flow task
// queue of the test's own, and a capture worker in the same process on a capture queue of its own
// (both carry the run's tag, so the run's teardown ends what they leave). The settings come from
// the ledger's test configuration: the same Temporal (test namespace), S3 and allowlist.
import { inject } from 'vitest';
import type { Config } from '../../src/config/env.ts';
import type { CaptureWorkerConfig, FlowConfig } from '../../src/flow/config.ts';
import type { FlowOptions } from '../../src/flow/server.ts';
import { loadProjectEnv } from './env.ts';
import { uniqueTaskQueue } from './temporal.ts';

export interface FlowQueues {
  flow: string;
  capture: string;
}

export const newFlowQueues = (): FlowQueues => ({ flow: uniqueTaskQueue('flow'), capture: uniqueTaskQueue('capture') });

/** The capture worker's write-only identity (stack:up gives SeaweedFS one: PUT, nothing else). */
export function captureIdentity(): { accessKeyId: string; secretAccessKey: string } {
  loadProjectEnv();
  const accessKeyId = process.env.CAPTURE_WORKER_S3_ACCESS_KEY_ID;
  const secretAccessKey = process.env.CAPTURE_WORKER_S3_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey)
    throw new Error('CAPTURE_WORKER_S3_ACCESS_KEY_ID and CAPTURE_WORKER_S3_SECRET_ACCESS_KEY are not set (.env.example declares them)');
  return { accessKeyId, secretAccessKey };
}

export function testCaptureWorkerConfig(ledger: Config, queues: FlowQueues, over: Partial<CaptureWorkerConfig> = {}): CaptureWorkerConfig {
  return {
    name: `test-capture-worker-${process.pid}`,
    slots: 8,
    temporal: { address: ledger.temporal.address, namespace: ledger.temporal.namespace, captureQueue: queues.capture },
    s3: { endpoint: ledger.s3.endpoint, region: ledger.s3.region, bucket: ledger.s3.bucket, ...captureIdentity() },
    capture: ledger.capture,
    ...over,
  };
}

export function testFlowConfig(ledger: Config, queues: FlowQueues, webhookToken: string): FlowConfig {
  return {
    port: 0,
    webhookToken,
    temporal: { address: ledger.temporal.address, namespace: ledger.temporal.namespace, flowQueue: queues.flow, captureQueue: queues.capture },
    identity: ledger.identity,
  };
}

/** startFlow's options for a test: its own queues (or the ones given, to take over from a flow
 * that died), the prebuilt workflow bundle and a capture worker in this process. */
export function testFlowOptions(
  ledger: Config,
  opts: {
    webhookToken?: string;
    queues?: FlowQueues;
    resolve?: FlowOptions['capture'] extends infer C ? (C extends { resolve?: infer R } ? R : never) : never;
  } = {},
): FlowOptions & { queues: FlowQueues } {
  const queues = opts.queues ?? newFlowQueues();
  const token = opts.webhookToken ?? ledger.crawl.webhook?.token;
  if (token === undefined) throw new Error('testFlowOptions: no webhook token in the configuration and none given');
  return {
    queues,
    config: testFlowConfig(ledger, queues, token),
    workflowBundlePath: inject('flowWorkflowBundlePath'),
    capture: { config: testCaptureWorkerConfig(ledger, queues), ...(opts.resolve ? { resolve: opts.resolve } : {}) },
  };
}
