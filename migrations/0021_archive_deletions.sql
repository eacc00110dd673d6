-- An archive its owner deleted stays deleted. Its capture_submissions row outlives it (it binds the
-- task to its crawl and organization), still carrying the manifest key and no archive: exactly
-- what reconcile registers, and the daily schedule runs it. And a level reported again names the
-- same task (a page's task id is derived from its crawl, level and URL). Each deletion leaves this
-- row; neither reconcile nor admission registers a task that has one. It also says who deleted
-- what and when, and what of the capture could not be removed (cleanup_error, NULL when all went).
CREATE TABLE archive_deletions (
  task_id       text PRIMARY KEY,
  archive_id    uuid NOT NULL,
  url           text NOT NULL,
  deleted_by    text NOT NULL,
  deleted_at    timestamptz NOT NULL DEFAULT now(),
  cleanup_error text
);
