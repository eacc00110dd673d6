-- Capture workers may put any key in the bucket (SeaweedFS can scope a key to a bucket, not to
-- the prefix of the level it captures), so one could put a new object over an archive the ledger
-- already admitted. The bucket keeps every version (stack:up turns versioning on), and each
-- archive now names the version its capture reported writing: URLs are signed for that version,
-- the indexer reads it, and deleting the archive deletes it. NULL: no version was reported (an
-- archive registered by the API, or a bucket without versioning), and the key is read as it is.
ALTER TABLE archives ADD COLUMN object_version text;
