// Tuple writes are recorded as outbox rows in the same transaction as the rows they describe:
// either both land or neither does. Delivery to OpenFGA happens afterwards (drainOutbox).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/types.ts';
import type { Tuple } from './tuples.ts';

export async function enqueueTuples(trx: Kysely<Database> | Transaction<Database>, tuples: Tuple[], operation: 'write' | 'delete' = 'write'): Promise<void> {
  if (tuples.length === 0) return;
  await trx
    .insertInto('fga_outbox')
    .values(tuples.map((t) => ({ operation, tuple_user: t.user, relation: t.relation, object: t.object, condition: t.condition ? JSON.stringify(t.condition) : null })))
    .execute();
}
