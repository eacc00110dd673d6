-- Reconcile reads the manifests admission could not: it must read the one its capture wrote, as
-- admission does. Any capture worker may put any key in the bucket, so the key alone may by now
-- hold a manifest a hostile page's worker put over it (naming another WACZ). The level report
-- names the manifest's version (manifestVersionId); it is kept here beside the key. NULL: no
-- version was reported (a bucket without versioning, a report from before this column), and the
-- key is read as it is.
ALTER TABLE capture_submissions ADD COLUMN manifest_version text;
