// The admitLevel activity: admits one stored report of a level into the ledger (src/ledger). The
// report is named by its id; one a newer report of the level replaced fails as StaleReport, and
// the workflow waits for that newer one.
import { ApplicationFailure, log } from '@temporalio/activity';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config/env.ts';
import type { Db } from '../db/connect.ts';
import { createAddressPolicy } from '../domain/address-policy.ts';
import { admitLevel as admit, AdmissionError, type AdmitLevelInput, type AdmitLevelResult } from '../ledger/admit-level.ts';
import type { ObjectReader } from '../s3/object-reader.ts';
import { NON_RETRYABLE } from '../../temporal.config.ts';

export interface AdmitInput {
  crawlId: string;
  depth: number;
  /** crawl_level_reports.report_id of the report to admit */
  reportId: string;
  /** false: re-admitting a level whose next level is already out (ledger corrected, frontier kept) */
  expand: boolean;
}

export interface AdmitDeps {
  config: Config;
  db: Db;
  s3: S3Client;
  /** admission's reader of manifests and links; whoever passes it closes it (the worker does) */
  reader: ObjectReader;
}

export function createAdmitLevel(deps: AdmitDeps): (input: AdmitInput) => Promise<AdmitLevelResult> {
  const { config, db, s3, reader } = deps;
  const policy = createAddressPolicy(config.capture.allow, config.capture.deniedPorts);
  return async function admitLevel(input) {
    // the ledger checks reportId against the level's current report (StaleReport when replaced)
    const request: AdmitLevelInput & { reportId: string } = { crawlId: input.crawlId, depth: input.depth, reportId: input.reportId, expand: input.expand };
    try {
      return await admit({ db, s3, reader, bucket: config.s3.bucket, log: { warn: (msg, meta) => log.warn(msg, meta) }, policy }, request);
    } catch (err) {
      if (err instanceof AdmissionError) throw ApplicationFailure.nonRetryable(err.message, NON_RETRYABLE.admission);
      throw err;
    }
  };
}
