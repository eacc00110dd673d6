-- Every statement that queues outbox rows sends NOTIFY fga_outbox, so the worker's one drain
-- (src/worker/outbox-wake.ts, LISTEN fga_outbox) wakes as soon as the writing transaction
-- commits: Postgres delivers a notification only on commit and folds a transaction's identical
-- notifications into one, so a level's thousands of rows cost one wake. Whatever process writes
-- (the API creating a crawl, the worker admitting a level, fga:reconcile) wakes it the same way;
-- the outbox-drain schedule stays as the backstop for a missed notification.
CREATE FUNCTION fga_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('fga_outbox', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER fga_outbox_notify AFTER INSERT ON fga_outbox FOR EACH STATEMENT EXECUTE FUNCTION fga_outbox_notify();
