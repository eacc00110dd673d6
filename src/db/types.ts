// Kysely table types, written to match migrations/. Every query is typed from these.
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { CrawlState, StopReason } from '../domain/crawl.ts';
import type { RuleAction } from '../domain/rules/index.ts';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type GeneratedAlways<T> = ColumnType<T, never, never>;
type Json<T> = ColumnType<T, T | string, T | string>;
/** jsonb with a database default: optional on insert. */
type JsonWithDefault<T> = ColumnType<T, T | string | undefined, T | string>;

// one definition each, in the domain; the columns use them
export type { CrawlState, RuleAction, StopReason };
export type PageState = 'pending' | 'captured' | 'failed' | 'skipped';

export interface CaptureTargetsTable {
  id: Generated<string>;
  org_id: string;
  url: string;
  url_hash: GeneratedAlways<Buffer>;
  enabled: Generated<boolean>;
  created_at: Generated<Date>;
}

export interface CrawlsTable {
  id: Generated<string>;
  org_id: string;
  submitted_by: string;
  state: Generated<CrawlState>;
  stop_reason: StopReason | null;
  seeds: string[];
  rules: Json<unknown[]>;
  max_depth: number;
  max_pages: number;
  per_host_delay_ms: number;
  host_parallelism: number;
  behaviors_seconds: Generated<number>;
  site_behaviors: Generated<boolean>;
  qa: Generated<boolean>;
  formats: string[];
  signing: Generated<boolean>;
  depth_reached: Generated<number>;
  dispatched_depth: number | null;
  failure: string | null;
  started_at: Generated<Date>;
  finished_at: Timestamp | null;
}

export interface CrawlPagesTable {
  id: Generated<number>;
  crawl_id: string;
  url: string;
  url_hash: GeneratedAlways<Buffer>;
  depth: number;
  host: string;
  action: Generated<'follow' | 'capture'>;
  state: Generated<PageState>;
  skip_reason: string | null;
  task_id: string | null;
  final_url: string | null;
  submitted_at: Timestamp | null;
  finished_at: Timestamp | null;
  discovered_at: Generated<Date>;
}

export interface CrawlLevelReportsTable {
  crawl_id: string;
  depth: number;
  report_id: Generated<string>;
  body: Json<unknown>;
  reported_by: string;
  reported_at: Generated<Date>;
  admitted_at: Timestamp | null;
}

export interface CrawlLevelDispatchesTable {
  crawl_id: string;
  depth: number;
  /** sha256 of each capability minted for the level (a retried dispatch adds one) */
  capability_hashes: Buffer[];
  artifact_prefix: string;
  deadline: Timestamp;
  dispatched_at: Generated<Date>;
  reports: Generated<number>;
  /** when the workflow was last signalled a heartbeat of the level (null: not since the dispatch) */
  heartbeat_signalled_at: Timestamp | null;
}

export interface CrawlHostsTable {
  crawl_id: string;
  host: string;
  effective_delay_ms: number;
  last_finished_at: Timestamp | null;
}

export interface CrawlDecisionsTable {
  crawl_id: string;
  depth: number;
  rule: number;
  action: RuleAction;
  hostname: string;
  links: number;
  samples: ColumnType<string[], string[] | undefined, string[]>;
}

export interface CaptureSubmissionsTable {
  task_id: string;
  org_id: string;
  submitted_by: string;
  crawl_id: string | null;
  url: string;
  manifest_key: string | null;
  manifest_error: string | null;
  reported_at: Generated<Date>;
}

export interface ArchivesTable {
  id: Generated<string>;
  task_id: string;
  bucket: string;
  object_key: string;
  url: string;
  final_url: string | null;
  sha256: string | null;
  size: ColumnType<number | null, number | null, number | null>;
  provenance: JsonWithDefault<Record<string, unknown>>;
  captured_at: Timestamp;
  indexed_at: Timestamp | null;
  created_at: Generated<Date>;
  /** why the indexer passes this archive over for good (0011); null: indexable, or not tried */
  index_error: string | null;
}

export interface FgaOutboxTable {
  id: Generated<number>;
  operation: Generated<'write' | 'delete'>;
  tuple_user: string;
  relation: string;
  object: string;
  condition: Json<{ name: string; context?: Record<string, unknown> }> | null;
  attempts: Generated<number>;
  last_error: string | null;
  created_at: Generated<Date>;
  /** times OpenFGA refused the tuple itself (0006) */
  refusals: Generated<number>;
  /** set once refusals reached the drainer's limit: dead letter, no longer sent (0006) */
  dead_at: Timestamp | null;
}

export interface CrawlRefusalsTable {
  crawl_id: string;
  depth: number;
  hostname: string;
  code: string;
  urls: number;
  samples: ColumnType<string[], string[] | undefined, string[]>;
}

/** a link the rules skipped at a level, by the sha256 of its URL (0009) */
export interface CrawlSkippedLinksTable {
  crawl_id: string;
  depth: number;
  url_hash: Buffer;
}

/** an archive's WACZ requires another's (its revisits refer to payloads stored there), 0012 */
export interface ArchiveRequiresTable {
  archive_id: string;
  bucket: string;
  object_key: string;
  /** the required archive once it is in the ledger (same crawl); null until then */
  required_id: string | null;
}

export interface Database {
  capture_targets: CaptureTargetsTable;
  crawls: CrawlsTable;
  crawl_pages: CrawlPagesTable;
  crawl_level_reports: CrawlLevelReportsTable;
  crawl_level_dispatches: CrawlLevelDispatchesTable;
  crawl_hosts: CrawlHostsTable;
  crawl_decisions: CrawlDecisionsTable;
  crawl_refusals: CrawlRefusalsTable;
  crawl_skipped_links: CrawlSkippedLinksTable;
  capture_submissions: CaptureSubmissionsTable;
  archives: ArchivesTable;
  archive_requires: ArchiveRequiresTable;
  fga_outbox: FgaOutboxTable;
}

export type Crawl = Selectable<CrawlsTable>;
export type NewCrawl = Insertable<CrawlsTable>;
export type CrawlUpdate = Updateable<CrawlsTable>;
export type CrawlPage = Selectable<CrawlPagesTable>;
export type Archive = Selectable<ArchivesTable>;
export type NewArchive = Insertable<ArchivesTable>;
export type OutboxRow = Selectable<FgaOutboxTable>;
export type NewOutboxRow = Insertable<FgaOutboxTable>;
