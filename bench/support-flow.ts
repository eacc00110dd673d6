// The reference capture flow as a bench runs it: receiver, flow worker and one capture worker in
// this process, on queues of the bench's own in the tests' Temporal namespace (nothing lands in
// the operator's), writing to the store the bench gives (memory: the bench measures capture and
// scheduling, not uploads).
import { randomBytes } from 'node:crypto';
import { parseAllowlist } from '../src/domain/address-policy.ts';
import type { FlowOptions } from '../src/flow/server.ts';
import type { ArtifactStore } from '../src/flow/store.ts';
import { TEST_SITES_ALLOW } from '../test/support/config.ts';

export function benchFlowOptions(token: string, store: ArtifactStore, slots = 8): FlowOptions {
  const address = process.env.CAPTURE_LEDGER_TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const namespace = process.env.CAPTURE_LEDGER_TEMPORAL_TEST_NAMESPACE ?? 'capture-ledger-test';
  const tag = `bench-${randomBytes(4).toString('hex')}`;
  const queues = { flowQueue: `flow-${tag}`, captureQueue: `capture-${tag}` };
  return {
    config: { port: 0, webhookToken: token, temporal: { address, namespace, ...queues }, identity: { mode: 'none' } },
    capture: {
      config: {
        name: `bench-capture-worker-${process.pid}`,
        slots,
        temporal: { address, namespace, captureQueue: queues.captureQueue },
        s3: { endpoint: 'http://127.0.0.1:1', region: 'us-east-1', bucket: store.bucket, accessKeyId: 'unused', secretAccessKey: 'unused' },
        capture: { allow: parseAllowlist(TEST_SITES_ALLOW), deniedPorts: [] },
      },
      store,
    },
  };
}
