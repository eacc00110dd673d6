-- What the ledger handed the capture flow for each level, so a report can be tied to its dispatch
-- (design.md "The webhook contract"). Only sha256 digests of the per-level capabilities are kept:
-- a dispatch retried after a lost answer mints a new one and the earlier ones stay valid (the flow
-- may be working on the first), so the level keeps a short list of them.
CREATE TABLE crawl_level_dispatches (
  crawl_id          uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
  depth             integer NOT NULL CHECK (depth >= 0),
  capability_hashes bytea[] NOT NULL CHECK (cardinality(capability_hashes) BETWEEN 1 AND 8),
  -- keys of this level's artifacts and manifests start with it; ends with '/'
  artifact_prefix   text NOT NULL CHECK (artifact_prefix LIKE '%/'),
  -- the level must be reported before this
  deadline          timestamptz NOT NULL,
  dispatched_at     timestamptz NOT NULL DEFAULT now(),
  -- reports taken for this level (re-reports are capped)
  reports           integer NOT NULL DEFAULT 0 CHECK (reports >= 0),
  PRIMARY KEY (crawl_id, depth)
);

-- Per crawl and host: the delay the flow kept between captures (the longer of perHostDelayMs and
-- robots.txt Crawl-delay) and the last finish reported, so every dispatch's notBefore keeps the
-- spacing across levels and across a restart of the flow, which forgets both.
CREATE TABLE crawl_hosts (
  crawl_id           uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
  host               text NOT NULL,
  effective_delay_ms integer NOT NULL CHECK (effective_delay_ms >= 0),
  last_finished_at   timestamptz,
  PRIMARY KEY (crawl_id, host)
);
