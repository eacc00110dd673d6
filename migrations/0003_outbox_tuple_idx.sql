-- The outbox drainer asks, per batch, whether an earlier queued row exists for the same tuple (so
-- a delete never overtakes the write it undoes when several batches are in flight).
CREATE INDEX fga_outbox_tuple_idx ON fga_outbox (object, relation, tuple_user, id);
