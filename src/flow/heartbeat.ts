// While the flow works on a level, the level workflow POSTs a heartbeat to the dispatch's
// heartbeatUrl this often (activity sendHeartbeat), with the same token and capability as the
// report. The ledger re-dispatches a level whose heartbeats stop.
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 5_000;
