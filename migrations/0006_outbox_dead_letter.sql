-- The outbox's dead letter. A tuple OpenFGA refuses for its own sake (a 400: unknown relation,
-- wrong type, a condition the model does not have) is refused again on every drain. After
-- `refusals` reaches the drainer's limit the row gets dead_at: it is no longer sent, it no
-- longer holds back later rows for the same tuple, and fga:drain and stack:status count it.
-- Failures that say nothing about the tuple (OpenFGA unreachable) count in attempts only.
-- `npm run fga:drain -- --retry-dead` puts dead rows back in the queue.
ALTER TABLE fga_outbox
  ADD COLUMN refusals integer NOT NULL DEFAULT 0,
  ADD COLUMN dead_at timestamptz;

CREATE INDEX fga_outbox_dead_idx ON fga_outbox (id) WHERE dead_at IS NOT NULL;
