-- The links the rules skipped, per level, one row per distinct URL (its sha256, since a URL may be
-- 8 KiB and a btree entry may not). crawl_decisions tallies skips per level, so a nav link
-- skipped on the pages of three levels is three there; pagesDiscovered counts each URL once per
-- crawl from here. Replaced with the level's decisions when a level is reported again.
CREATE TABLE crawl_skipped_links (
  crawl_id uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
  depth    integer NOT NULL CHECK (depth >= 0),
  url_hash bytea NOT NULL CHECK (length(url_hash) = 32),
  PRIMARY KEY (crawl_id, depth, url_hash)
);
