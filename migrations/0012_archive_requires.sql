-- Which archive needs which (issue 26). A WACZ whose revisit records refer to payloads stored in
-- full in other WACZ files of the same crawl requires them: replay loads them together, and an
-- archive another requires is not deleted. The edge is kept as the manifest named it (bucket and
-- object key, the WACZ's datapackage.json `requires`) and resolved to the required archive once
-- that archive is in the ledger and belongs to the same crawl: admission and reconcile may
-- register the two in either order. required_id NULL: not (yet) resolved.
CREATE TABLE archive_requires (
  archive_id  uuid NOT NULL REFERENCES archives (id) ON DELETE CASCADE,
  bucket      text NOT NULL,
  object_key  text NOT NULL,
  -- RESTRICT: a required archive cannot be deleted from under the archives that need it
  required_id uuid REFERENCES archives (id) ON DELETE RESTRICT,
  PRIMARY KEY (archive_id, bucket, object_key),
  CHECK (required_id IS DISTINCT FROM archive_id)
);
CREATE INDEX archive_requires_required_idx ON archive_requires (required_id) WHERE required_id IS NOT NULL;
CREATE INDEX archive_requires_unresolved_idx ON archive_requires (bucket, object_key) WHERE required_id IS NULL;
