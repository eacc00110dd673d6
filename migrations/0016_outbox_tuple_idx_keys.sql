-- The tuple index answers one question: which live rows queue the same tuple (the drainer's
-- overtaking count, the listing's "parent tuple delivered" probe). With the id among its keys it
-- could also serve a batch's id range (`id > cursor`, as a condition on its last column) and,
-- sorted, its order: after autovacuum counted the queue empty (reltuples 0) while a burst was
-- being queued, the planner took that path for every batch of the next 100,000 rows, each a walk
-- of the whole index and a sort of the queue (EXPLAIN: 110,686 buffers, a 13 MB external sort,
-- 130 ms a batch; the drain at 10,000 tuples/s where it runs at 90,000). Keyed by the tuple
-- alone, it serves neither: the batch's range and order can come only from the primary key.
DROP INDEX fga_outbox_tuple_idx;
CREATE INDEX fga_outbox_tuple_idx ON fga_outbox (object, relation, tuple_user);
