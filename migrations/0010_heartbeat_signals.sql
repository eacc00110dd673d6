-- When the workflow was last signalled a heartbeat of the level. Every signal stays in the crawl
-- workflow's history (about 4 events each, and Temporal ends a workflow at 51,200), so the API
-- passes on at most one heartbeat per quarter of the liveness window; the flow may send more
-- often, and a flow that floods heartbeats cannot grow the history. A dispatch clears it, so the
-- first heartbeat after a (re-)dispatch always goes through.
ALTER TABLE crawl_level_dispatches ADD COLUMN heartbeat_signalled_at timestamptz;
