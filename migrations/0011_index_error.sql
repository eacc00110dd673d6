-- Why an archive cannot be indexed, when that is a property of the archive and not of the moment
-- (no WACZ, a malformed or oversized pages/pages.jsonl, a page OpenSearch refuses): the indexer
-- sets it once and passes the archive over from then on, so one such archive neither fails every
-- indexing run nor is read again each time. indexed_at stays NULL. A failure that may pass (the
-- object store or OpenSearch unreachable) leaves it NULL and the archive is tried again.
-- `UPDATE archives SET index_error = NULL` makes the indexer try the marked ones again.
ALTER TABLE archives ADD COLUMN index_error text;
