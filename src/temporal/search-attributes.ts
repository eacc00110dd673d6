// Typed search-attribute keys (registered on the server by `npm run stack:up`, see
// temporal.config.ts SEARCH_ATTRIBUTES). Pure: used by the API (start) and the workflow (upsert).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const CRAWL_ID_KEY = defineSearchAttributeKey('CrawlId', SearchAttributeType.KEYWORD);
export const CRAWL_ORG_KEY = defineSearchAttributeKey('CrawlOrg', SearchAttributeType.KEYWORD);
export const CRAWL_STATE_KEY = defineSearchAttributeKey('CrawlState', SearchAttributeType.KEYWORD);
