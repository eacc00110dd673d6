// The worker's outbox wake delivers a crawl's tuples as its writes commit, beside the workflow
// rather than inside it: a test that reads OpenFGA (or the outbox) right after a crawl waits for
// that delivery first.
import type { Db } from '../../src/db/connect.ts';
import { eventually } from './crawls.ts';

/** Resolves once no live (not dead-lettered) row is queued in the outbox. */
export async function outboxDrained(db: Db, timeoutMs = 30_000): Promise<void> {
  await eventually(
    async () => ((await db.selectFrom('fga_outbox').select('id').where('dead_at', 'is', null).limit(1).execute()).length === 0 ? true : undefined),
    timeoutMs,
    'the outbox drained by the worker',
  );
}
