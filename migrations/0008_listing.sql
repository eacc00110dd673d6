-- Listing (GET /api/archives).
--
-- capturedAt is stored at millisecond precision, the precision every caller sees in its ISO
-- string: a cursor (before, beforeId) built from a row then compares equal to that row's own
-- timestamp, so rows sharing a timestamp are ordered by id alone and none falls between pages.
-- (Microseconds would sort rows that print the same timestamp in an order no cursor can name.)
ALTER TABLE archives ALTER COLUMN captured_at TYPE timestamptz(3);

-- For callers who see few crawls, candidates come from OpenFGA (ListObjects on capture_job) and
-- are intersected here: the archives whose capture was reported for one of those crawls.
CREATE INDEX capture_submissions_crawl_idx ON capture_submissions (crawl_id, task_id) WHERE crawl_id IS NOT NULL;
