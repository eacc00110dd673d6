import type { OpenFgaClient } from '@openfga/sdk';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Config } from '../config/env.ts';
import type { Db } from '../db/connect.ts';

/** Everything the API's routes use, built once by main.ts (or by a test) and passed down. */
export interface AppDeps {
  config: Config;
  db: Db;
  fga: OpenFgaClient;
  s3: S3Client;
  /** present when crawls are configured (both webhook settings) */
  temporal?: TemporalClient;
}
