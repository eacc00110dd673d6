-- crawl_pages and capture_submissions name their crawl. Their foreign keys checked that row by
-- row: a trigger event a row, each a lookup and a key-share lock of the same crawl. Admission
-- writes thousands of them a level, all of one crawl: 5,000 next-level rows in one statement took
-- 105 ms, 30 of them in the constraint's trigger and most of the rest in queueing its events
-- (EXPLAIN ANALYZE); 51 ms without it. The same guarantee is now kept once a statement:
-- * rows inserted: the crawls they name are locked FOR KEY SHARE, as the constraint locks them,
--   so none can be deleted until the rows' transaction ends, and a crawl that is not there fails
--   the statement with foreign_key_violation (23503), as the constraint did;
-- * a row's crawl_id set by an UPDATE (never done but by the cascade below): checked the same way;
-- * a crawl deleted: its pages go with it (the constraint's ON DELETE CASCADE) and its
--   submissions forget it (ON DELETE SET NULL), once a statement;
-- * a crawl's id never changes (the constraint refused that while rows named it).
ALTER TABLE crawl_pages DROP CONSTRAINT crawl_pages_crawl_id_fkey;
ALTER TABLE capture_submissions DROP CONSTRAINT capture_submissions_crawl_id_fkey;

-- Statement level, with the statement's new rows as new_rows.
CREATE FUNCTION crawl_rows_crawl_exists() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing uuid;
BEGIN
  SELECT n.crawl_id INTO missing
  FROM (SELECT DISTINCT crawl_id FROM new_rows WHERE crawl_id IS NOT NULL) n
  LEFT JOIN LATERAL (SELECT true AS found FROM crawls c WHERE c.id = n.crawl_id FOR KEY SHARE) c ON true
  WHERE c.found IS NULL
  LIMIT 1;
  IF FOUND THEN
    RAISE foreign_key_violation USING
      MESSAGE = format('insert or update on table "%s" violates its crawl reference', TG_TABLE_NAME),
      DETAIL = format('Key (crawl_id)=(%s) is not present in table "crawls".', missing);
  END IF;
  RETURN NULL;
END $$;

-- Row level, for an UPDATE that sets crawl_id.
CREATE FUNCTION crawl_row_crawl_exists() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.crawl_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM crawls c WHERE c.id = NEW.crawl_id FOR KEY SHARE) THEN
    RAISE foreign_key_violation USING
      MESSAGE = format('insert or update on table "%s" violates its crawl reference', TG_TABLE_NAME),
      DETAIL = format('Key (crawl_id)=(%s) is not present in table "crawls".', NEW.crawl_id);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER crawl_pages_crawl_exists AFTER INSERT ON crawl_pages
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION crawl_rows_crawl_exists();
CREATE TRIGGER crawl_pages_crawl_set AFTER UPDATE OF crawl_id ON crawl_pages
  FOR EACH ROW EXECUTE FUNCTION crawl_row_crawl_exists();
CREATE TRIGGER capture_submissions_crawl_exists AFTER INSERT ON capture_submissions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION crawl_rows_crawl_exists();
CREATE TRIGGER capture_submissions_crawl_set AFTER UPDATE OF crawl_id ON capture_submissions
  FOR EACH ROW EXECUTE FUNCTION crawl_row_crawl_exists();

CREATE FUNCTION crawls_deleted_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM crawl_pages p USING gone WHERE p.crawl_id = gone.id;
  UPDATE capture_submissions s SET crawl_id = NULL FROM gone WHERE s.crawl_id = gone.id;
  RETURN NULL;
END $$;
CREATE TRIGGER crawls_deleted_rows AFTER DELETE ON crawls
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION crawls_deleted_rows();

CREATE FUNCTION crawls_id_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id IS DISTINCT FROM OLD.id THEN
    RAISE foreign_key_violation USING MESSAGE = format('a crawl''s id never changes: %s', OLD.id);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER crawls_id_kept BEFORE UPDATE OF id ON crawls
  FOR EACH ROW EXECUTE FUNCTION crawls_id_kept();
