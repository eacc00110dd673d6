// After a bench writes its store's tuples (100,000 and more, in seconds), OpenFGA's Postgres
// still plans with statistics from before they were written: autovacuum analyzes a table once a
// tenth of it changed, and on a developer's stack OpenFGA's tuple table holds the millions of
// tuples earlier runs' stores left (a deleted store's tuples stay), so it does not within a bench.
// Planned blind, ListObjects' reverse lookup of archive#viewer for the caller's organizations
// walked the bench store's 100,000 archive tuples through the primary key (12–16 ms a query,
// shares' p50 15 ms in the listing bench at 100,000 archives) instead of probing the user index
// (0.1 ms). A deployment's store has been there while autovacuum ran: the bench analyzes the
// tuple table once it has written, so OpenFGA is measured as it runs there.
import { onFgaDatastore } from '../test/support/fga-datastore.ts';

/** ANALYZE of OpenFGA's tuple table (its datastore, CAPTURE_LEDGER_FGA_DATABASE_URL). */
export async function analyzeFgaTuples(): Promise<void> {
  await onFgaDatastore((client) => client.query('ANALYZE tuple'));
}
