import type { OpenFgaClient } from '@openfga/sdk';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Config } from '../config/env.ts';
import type { Db } from '../db/connect.ts';
import { createS3 } from '../s3/client.ts';
import { createSearchIndex, type SearchIndex } from '../search/client.ts';
import { createUrlSigner, type UrlSigner } from './presign.ts';
import type { CrawlLevelService } from './services/crawl-levels.ts';
import type { CrawlService } from './services/crawls.ts';

/** Everything the API's routes use: given by the caller (main.ts, a test) or made by the app's plugins, and passed down. */
export interface AppDeps {
  config: Config;
  db: Db;
  fga: OpenFgaClient;
  s3: S3Client;
  /** presigned GETs for archive objects */
  signer: UrlSigner;
  /** present when search is configured (CAPTURE_LEDGER_OPENSEARCH_URL) */
  search?: SearchIndex;
  /** present when crawls are configured (both webhook settings) */
  temporal?: TemporalClient;
  /** starting, listing and viewing crawls; built by buildApp (services/index.ts) unless a test passes its own */
  crawls?: CrawlService;
  /** a level's report and heartbeats, progress and pacing; built like crawls when not given */
  levels?: CrawlLevelService;
}

export type AppClients = Pick<AppDeps, 's3' | 'signer' | 'search'>;

/** What buildApp needs: the clients and the pool are optional, and those missing are the app's own
 * (plugins/clients.ts, plugins/db.ts; Temporal: plugins/temporal.ts, when asked to connect). */
export type AppInput = Omit<AppDeps, keyof AppClients | 'db'> & Partial<AppClients> & { db?: Db };

/** The object-store and search clients, made once from the configuration; closeAppClients ends them. */
export function createAppClients(config: Config): AppClients {
  return {
    s3: createS3(config.s3),
    signer: createUrlSigner(config.s3),
    search: config.opensearch === undefined ? undefined : createSearchIndex(config.opensearch),
  };
}

export async function closeAppClients(clients: AppClients): Promise<void> {
  clients.s3.destroy();
  await clients.search?.client.close();
}
