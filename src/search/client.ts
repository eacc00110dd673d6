// The OpenSearch client and the index it writes to. @opensearch-project/opensearch 3.x takes
// snake_case parameter names only (filter_path, track_total_hits): camelCase ones are silently
// sent as unknown query parameters and rejected by the server.
import { Client } from '@opensearch-project/opensearch';
import type { Config } from '../config/env.ts';

export interface SearchIndex {
  client: Client;
  /** config.opensearch.index: one name per deployment (tests use one per file) */
  index: string;
}

export function createSearchIndex(opensearch: NonNullable<Config['opensearch']>): SearchIndex {
  return {
    client: new Client({ node: opensearch.url, requestTimeout: 30_000, maxRetries: 2 }),
    index: opensearch.index,
  };
}
