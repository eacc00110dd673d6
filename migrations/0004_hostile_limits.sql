-- What the address policy and the per-page link cap kept out of a crawl (issue 12), per depth,
-- host name and code, replaced when a level is reported again, like crawl_decisions. Host names are
-- stored cut to 253 characters, so no key can outgrow a btree entry (a 3,000-character host
-- name did, in crawl_decisions).
CREATE TABLE crawl_refusals (
  crawl_id uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
  depth    integer NOT NULL CHECK (depth >= 0),
  hostname text NOT NULL CHECK (length(hostname) <= 253),
  code     text NOT NULL CHECK (length(code) BETWEEN 1 AND 32),
  urls     integer NOT NULL CHECK (urls >= 0),
  samples  text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (crawl_id, depth, hostname, code)
);

-- Links over 253 characters of host name are refused before the rules see them; the check keeps
-- it so (NOT VALID: rows written before this migration are left as they are).
ALTER TABLE crawl_decisions ADD CONSTRAINT crawl_decisions_hostname_length CHECK (length(hostname) <= 253) NOT VALID;
