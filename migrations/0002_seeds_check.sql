-- crawls.seeds must hold at least one seed. 0001 wrote the check as
-- array_length(seeds, 1) >= 1, which lets '{}' through: array_length of an empty array is NULL,
-- and a CHECK whose expression is NULL passes. A seedless crawl could never start, so it must
-- fail here, under the same constraint name.
ALTER TABLE crawls DROP CONSTRAINT crawls_seeds_check;
ALTER TABLE crawls ADD CONSTRAINT crawls_seeds_check
  CHECK (array_length(seeds, 1) IS NOT NULL AND array_length(seeds, 1) >= 1 AND array_position(seeds, NULL) IS NULL);
