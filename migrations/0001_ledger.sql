-- The ledger's tables. Applied in one transaction by `npm run db:migrate`.
CREATE EXTENSION IF NOT EXISTS pgcrypto;

CREATE TABLE capture_targets (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id     text NOT NULL,
  url        text NOT NULL,
  url_hash   bytea GENERATED ALWAYS AS (digest(url, 'sha256')) STORED,
  enabled    boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, url_hash)
);

CREATE TABLE crawls (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id            text NOT NULL,
  submitted_by      text NOT NULL,
  state             text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'succeeded', 'failed')),
  stop_reason       text CHECK (stop_reason IN ('completed', 'max_depth', 'max_pages', 'failed')),
  seeds             text[] NOT NULL CHECK (array_length(seeds, 1) >= 1),
  rules             jsonb NOT NULL,
  max_depth         integer NOT NULL CHECK (max_depth >= 0),
  max_pages         integer NOT NULL CHECK (max_pages >= 1),
  per_host_delay_ms integer NOT NULL CHECK (per_host_delay_ms >= 0),
  host_parallelism  integer NOT NULL CHECK (host_parallelism >= 1),
  formats           text[] NOT NULL,
  signing           boolean NOT NULL DEFAULT false,
  depth_reached     integer NOT NULL DEFAULT 0,
  dispatched_depth  integer,
  failure           text,
  started_at        timestamptz NOT NULL DEFAULT now(),
  finished_at       timestamptz,
  CHECK ((state = 'running') = (finished_at IS NULL)),
  CHECK ((state = 'running') = (stop_reason IS NULL))
);
-- One crawl at a time, held by Postgres rather than by any process: two crawls cannot see each
-- other's per-host timing, so the same host would quietly be hit at twice the rate.
CREATE UNIQUE INDEX crawls_single_active_idx ON crawls ((true)) WHERE state = 'running';
CREATE INDEX crawls_started_at_idx ON crawls (started_at DESC);

CREATE TABLE crawl_pages (
  id           bigserial PRIMARY KEY,
  crawl_id     uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
  url          text NOT NULL,
  url_hash     bytea GENERATED ALWAYS AS (digest(url, 'sha256')) STORED,
  depth        integer NOT NULL CHECK (depth >= 0),
  host         text NOT NULL,
  -- follow: its links are read; capture: captured only
  action       text NOT NULL DEFAULT 'follow' CHECK (action IN ('follow', 'capture')),
  state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'captured', 'failed', 'skipped')),
  skip_reason  text,
  task_id      text,
  final_url    text,
  submitted_at timestamptz,
  finished_at  timestamptz,
  discovered_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (crawl_id, url_hash)
);
CREATE INDEX crawl_pages_level_idx ON crawl_pages (crawl_id, depth);
CREATE INDEX crawl_pages_task_idx ON crawl_pages (task_id) WHERE task_id IS NOT NULL;

-- One row per crawl and depth, replaced on re-report. The workflow signal carries only a
-- reference to it, so payloads stay far below Temporal's limits.
CREATE TABLE crawl_level_reports (
  crawl_id    uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
  depth       integer NOT NULL CHECK (depth >= 0),
  report_id   uuid NOT NULL DEFAULT gen_random_uuid(),
  body        jsonb NOT NULL,
  reported_by text NOT NULL,
  reported_at timestamptz NOT NULL DEFAULT now(),
  admitted_at timestamptz,
  PRIMARY KEY (crawl_id, depth)
);

CREATE TABLE crawl_decisions (
  crawl_id uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
  depth    integer NOT NULL,
  rule     integer NOT NULL CHECK (rule >= 0),
  action   text NOT NULL CHECK (action IN ('follow', 'capture', 'skip')),
  hostname text NOT NULL,
  links    integer NOT NULL CHECK (links >= 0),
  samples  text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (crawl_id, depth, rule, hostname)
);
CREATE INDEX crawl_decisions_hostname_idx ON crawl_decisions (hostname);

CREATE TABLE capture_submissions (
  task_id        text PRIMARY KEY,
  org_id         text NOT NULL,
  submitted_by   text NOT NULL,
  crawl_id       uuid REFERENCES crawls (id) ON DELETE SET NULL,
  url            text NOT NULL,
  manifest_key   text,
  manifest_error text,
  reported_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX capture_submissions_reported_idx ON capture_submissions (reported_at);

-- No owner column and no crawl_id: who may read an archive is a relationship in OpenFGA, and
-- the crawl is reached through crawl_pages.task_id.
CREATE TABLE archives (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  task_id     text NOT NULL UNIQUE,
  bucket      text NOT NULL,
  object_key  text NOT NULL,
  url         text NOT NULL,
  final_url   text,
  sha256      text,
  size        bigint,
  provenance  jsonb NOT NULL DEFAULT '{}',
  captured_at timestamptz NOT NULL,
  indexed_at  timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (bucket, object_key)
);
CREATE INDEX archives_captured_at_idx ON archives (captured_at DESC, id DESC);
CREATE INDEX archives_unindexed_idx ON archives (captured_at) WHERE indexed_at IS NULL;

-- Tuple writes waiting for OpenFGA, recorded in the same transaction as the rows they describe.
CREATE TABLE fga_outbox (
  id          bigserial PRIMARY KEY,
  operation   text NOT NULL DEFAULT 'write' CHECK (operation IN ('write', 'delete')),
  tuple_user  text NOT NULL,
  relation    text NOT NULL,
  object      text NOT NULL,
  condition   jsonb,
  attempts    integer NOT NULL DEFAULT 0,
  last_error  text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
