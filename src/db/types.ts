// The ledger's table types. They are generated from the migrated schema: `npm run db:types`
// rewrites src/db/schema.generated.ts (kysely-codegen, configured in .kysely-codegenrc.json) and
// test/integration/db-types.test.ts fails when the committed file is not what the migrations
// make. Every query is typed from these; the rows' names the code uses are defined here.
import type { Insertable, Selectable } from 'kysely';
import type { DB } from './schema.generated.ts';
import type { CrawlState, StopReason } from '../domain/crawl.ts';
import type { RuleAction } from '../domain/rules/index.ts';

export type Database = DB;

// one definition each, in the domain; the columns use them
export type { CrawlState, RuleAction, StopReason };

export type Crawl = Selectable<DB['crawls']>;
export type NewCrawl = Insertable<DB['crawls']>;
export type Archive = Selectable<DB['archives']>;
export type OutboxRow = Selectable<DB['fga_outbox']>;
