-- Whether each capture of a crawl is scored against its own replay, and one that falls short
-- captured once more (src/domain/qa.ts). Off unless the crawl asks: it costs a second page load
-- of every capture, from its records, and a third visit to the host for a page that falls short.
ALTER TABLE crawls ADD COLUMN qa boolean NOT NULL DEFAULT false;
