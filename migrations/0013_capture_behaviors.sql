-- The in-page behaviors each capture of a crawl runs after load (browsertrix-behaviors):
-- behaviors_seconds is their budget (0: none, at most 120 as the API's schema says), site_behaviors
-- whether a site-specific behavior may replace scrolling. Rows from before ran none: they keep
-- the defaults, which only a new dispatch of theirs would read.
ALTER TABLE crawls
  ADD COLUMN behaviors_seconds integer NOT NULL DEFAULT 10 CHECK (behaviors_seconds BETWEEN 0 AND 120),
  ADD COLUMN site_behaviors boolean NOT NULL DEFAULT true;
