// The capture flow tested alone, with no ledger: the ledger's test configuration with placeholders
// where the flow needs nothing (OpenFGA, the ledger's webhook), the flow in this process reporting
// to a receiver of the test's own that takes any report (how a report authenticates is
// flow.test.ts's subject), the real bucket read back, and a level dispatched through the webhook.
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../src/config/env.ts';
import type { DispatchBody } from '../../src/domain/contract.ts';
import type { LevelRun } from '../../src/flow/level-runs.ts';
import { startFlow, type Flow } from '../../src/flow/server.ts';
import { createS3 } from '../../src/s3/client.ts';
import { testConfig } from './config.ts';
import { testFlowOptions } from './flow.ts';
import { dispatchLevel } from './flow-dispatch.ts';
import { startReceiver } from './report-receiver.ts';

/** The test configuration a flow without a ledger loads: its webhook token `token`, placeholders for what it never reaches. */
export function flowAloneConfig(token: string): Config {
  return testConfig({
    CAPTURE_LEDGER_FGA_STORE_ID: 'unused',
    CAPTURE_LEDGER_FGA_MODEL_ID: 'unused',
    CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: 'http://127.0.0.1:1/crawl',
    CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: token,
  });
}

/** An object's bytes, read from the bucket. */
export async function getObjectBytes(s3: S3Client, bucket: string, key: string): Promise<Buffer> {
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await r.Body!.transformToByteArray());
}

export interface FlowAlone {
  config: Config;
  s3: S3Client;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  flow: Flow;
  getObject(key: string): Promise<Buffer>;
  /** dispatchLevel with the flow's own token */
  dispatch(body: DispatchBody, timeoutMs: number, query?: string): Promise<LevelRun>;
  close(): Promise<void>;
}

/** The flow, its report receiver and an S3 client on the test bucket; close ends all three. */
export async function startFlowAlone(token: string): Promise<FlowAlone> {
  const config = flowAloneConfig(token);
  const s3 = createS3(config.s3);
  const receiver = await startReceiver();
  const flow = await startFlow({ ...testFlowOptions(config), port: 0, reportAuth: async () => ({}), reportRetry: { attempts: 2, baseDelayMs: 50 } }).catch(
    async (err: unknown) => {
      await receiver.close();
      s3.destroy();
      throw err;
    },
  );
  return {
    config,
    s3,
    receiver,
    flow,
    getObject: (key) => getObjectBytes(s3, config.s3.bucket, key),
    dispatch: (body, timeoutMs, query) => dispatchLevel(flow, token, body, timeoutMs, query),
    async close() {
      await flow.close();
      await receiver.close();
      s3.destroy();
    },
  };
}
