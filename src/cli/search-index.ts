// npm run search:index: indexes every archive whose indexed_at is NULL — the second half of a
// rebuild (`UPDATE archives SET indexed_at = NULL`), or a catch-up after indexing failed. Reads
// pages/pages.jsonl out of each WACZ with ranged requests. Exits 1 when search is not configured
// or an archive could not be indexed: one that failed for now stays unindexed (run again), one
// that cannot be indexed as it is is marked with its reason in archives.index_error and passed
// over until the next rebuild.
import { loadConfigOrExit } from '../config/env.ts';
import { createDb } from '../db/connect.ts';
import { createS3 } from '../s3/client.ts';
import { createSearchIndex } from '../search/client.ts';
import { indexPending } from '../search/indexer.ts';

const config = loadConfigOrExit();
if (config.opensearch === undefined) {
  console.error('search is not configured: set CAPTURE_LEDGER_OPENSEARCH_URL (npm run stack:up -- --profile search)');
  process.exit(1);
}
const db = createDb(config.databaseUrl, 5);
const s3 = createS3(config.s3);
const search = createSearchIndex(config.opensearch);
try {
  const t0 = performance.now();
  const result = await indexPending({
    db,
    s3,
    search,
    onFailure: (id, err, marked) => console.error(`archive ${id} not indexed${marked ? ' (index_error set)' : ''}: ${err.message}`),
  });
  const seconds = (performance.now() - t0) / 1000;
  console.log(`indexed ${result.indexed} archives (${result.pages} pages) into ${config.opensearch.index} in ${seconds.toFixed(1)} s; failed ${result.failed}`);
  if (result.failed > 0) process.exitCode = 1;
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await search.client.close();
  s3.destroy();
  await db.destroy();
}
