// The reference capture flow as a bench runs it: receiver, flow worker and one capture worker in
// this process, on queues of the bench's own in the tests' Temporal namespace (nothing lands in
// the operator's), writing to the store the bench gives (memory: the bench measures capture and
// scheduling, not uploads). benchCaptureConfig is a capture worker's settings for those queues,
// for a worker in this process or in one of its own (support-capture-worker.ts).
import { randomBytes } from 'node:crypto';
import { parseAllowlist } from '../src/domain/address-policy.ts';
import type { DispatchBody, LevelReportBody } from '../src/domain/contract.ts';
import type { CaptureWorkerConfig } from '../src/flow/config.ts';
import type { LevelRun } from '../src/flow/level-runs.ts';
import type { FlowOptions } from '../src/flow/server.ts';
import type { ArtifactStore } from '../src/flow/store.ts';
import { TEST_SITES_ALLOW } from '../test/support/config.ts';

export function benchTemporal(): { address: string; namespace: string } {
  return {
    address: process.env.CAPTURE_LEDGER_TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    namespace: process.env.CAPTURE_LEDGER_TEMPORAL_TEST_NAMESPACE ?? 'capture-ledger-test',
  };
}

export function benchCaptureConfig(captureQueue: string, bucket: string, slots: number, name = `bench-capture-worker-${process.pid}`): CaptureWorkerConfig {
  return {
    name,
    slots,
    temporal: { ...benchTemporal(), captureQueue },
    s3: { endpoint: 'http://127.0.0.1:1', region: 'us-east-1', bucket, accessKeyId: 'unused', secretAccessKey: 'unused' },
    capture: { allow: parseAllowlist(TEST_SITES_ALLOW), deniedPorts: [] },
  };
}

export function benchFlowOptions(token: string, store: ArtifactStore, slots = 8): FlowOptions {
  const temporal = benchTemporal();
  const tag = `bench-${randomBytes(4).toString('hex')}`;
  const queues = { flowQueue: `flow-${tag}`, captureQueue: `capture-${tag}` };
  return {
    config: { port: 0, webhookToken: token, temporal: { ...temporal, ...queues }, identity: { mode: 'none' } },
    capture: { config: benchCaptureConfig(queues.captureQueue, store.bucket, slots), store },
  };
}

/**
 * A level as the benches dispatch it: level 0 of the organization `bench`, WACZ only, unsigned, no
 * pause between a host's pages and no hold from earlier levels; `level` names the rest and may
 * change any of those.
 */
export function benchLevel(level: Pick<DispatchBody, 'crawlId' | 'reportUrl' | 'hostParallelism' | 'pages'> & Partial<DispatchBody>): DispatchBody {
  return { depth: 0, orgId: 'bench', formats: ['wacz'], signing: false, perHostDelayMs: 0, notBefore: {}, ...level };
}

/** The level's report, every page of it captured: a bench measures captures, not failures. */
export function capturedReport(run: LevelRun, level: { crawlId: string; depth: number }): LevelReportBody {
  const failed = (run.report?.pages ?? []).filter((p) => p.status !== 'captured');
  if (run.report === undefined || failed.length > 0)
    throw new Error(`level ${level.crawlId}/${level.depth}: ${failed.length} pages not captured: ${JSON.stringify(failed[0] ?? run.state)}`);
  return run.report;
}
