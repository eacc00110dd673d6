// The parts the harness (harness.ts) starts, each by itself: what it needs goes in, what it
// started goes on the teardown, newest first.
import type { S3Client } from '@aws-sdk/client-s3';
import { OpenFgaClient } from '@openfga/sdk';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config/env.ts';
import { buildReplayServer } from '../../src/replay/server.ts';
import { createS3 } from '../../src/s3/client.ts';
import { testConfig } from './config.ts';
import type { TestStore } from './fga.ts';
import { startPrivateOpenFga, startPrivateS3Gateway, type PrivateService } from './private.ts';

/** Undoes what was started, newest first; every step runs even when an earlier one fails. */
export class Teardown {
  private steps: (() => unknown)[] = [];
  add(step: () => unknown): void {
    this.steps.push(step);
  }
  async run(): Promise<void> {
    const failures: unknown[] = [];
    for (const step of this.steps.reverse()) {
      try {
        await step();
      } catch (err) {
        failures.push(err);
      }
    }
    this.steps = [];
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} teardown step(s) failed`);
  }
}

export function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn());
}

/** Starts `start` when asked and puts its `close` on the teardown; undefined when not asked. */
export async function startIf<T extends { close(): unknown }>(asked: unknown, teardown: Teardown, start: () => Promise<T>): Promise<T | undefined> {
  if (!asked) return undefined;
  const part = await start();
  teardown.add(() => part.close());
  return part;
}

export interface ReplayServer {
  /** http://127.0.0.1:port: what CAPTURE_LEDGER_REPLAY_URL says */
  url: string;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** npm run replay's server in this process, in front of the test bucket. */
export async function startReplayServer(): Promise<ReplayServer> {
  const { s3 } = testConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'unused', CAPTURE_LEDGER_FGA_MODEL_ID: 'unused' });
  const app = await buildReplayServer({ endpoint: s3.endpoint, bucket: s3.bucket });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, app, close: () => app.close() };
}

export interface Gateways {
  /** a private `weed s3` on the shared filer: the worker's S3 */
  s3?: PrivateService;
  /** a private `openfga run` on the shared datastore: the worker's OpenFGA */
  fga?: PrivateService;
}

export async function startGateways(asked: { s3?: boolean; fga?: boolean } | undefined, teardown: Teardown): Promise<Gateways> {
  const [s3, fga] = await Promise.all([startIf(asked?.s3, teardown, startPrivateS3Gateway), startIf(asked?.fga, teardown, startPrivateOpenFga)]);
  return { ...(s3 ? { s3 } : {}), ...(fga ? { fga } : {}) };
}

/** Starts again a gateway a test stopped (or a failed test left down). */
export async function restartStoppedGateways(gateways: Gateways): Promise<void> {
  for (const gw of [gateways.s3, gateways.fga]) if (gw !== undefined && !gw.running) await gw.start();
}

export interface WorkerClients {
  config: Config;
  s3?: S3Client;
  fga: OpenFgaClient;
}

/** The worker's configuration and clients: through the gateways where there are any, else the API's. */
export function workerClients(config: Config, store: TestStore, gateways: Gateways, teardown: Teardown): WorkerClients {
  const s3Endpoint = gateways.s3?.url ?? config.s3.endpoint;
  const fgaUrl = gateways.fga?.url ?? config.fga.apiUrl;
  // both its config and its clients: admission may build its own reader from config.s3
  const workerConfig: Config = { ...config, s3: { ...config.s3, endpoint: s3Endpoint }, fga: { ...config.fga, apiUrl: fgaUrl } };
  const s3 = gateways.s3 === undefined ? undefined : createS3(workerConfig.s3);
  if (s3 !== undefined) teardown.add(() => s3.destroy());
  const fga = gateways.fga === undefined ? store.client : new OpenFgaClient({ apiUrl: fgaUrl, storeId: store.storeId, authorizationModelId: store.modelId });
  return { config: workerConfig, ...(s3 ? { s3 } : {}), fga };
}

/** A Temporal client on the configuration's namespace, its connection closed with the harness. */
export async function connectTemporal(config: Config, teardown: Teardown): Promise<Client> {
  const connection = await Connection.connect({ address: config.temporal.address });
  teardown.add(() => connection.close());
  return new Client({ connection, namespace: config.temporal.namespace });
}
