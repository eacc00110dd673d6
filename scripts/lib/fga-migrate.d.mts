/** Changed rows after which autovacuum analyzes OpenFGA's tuple table. */
export declare const TUPLE_ANALYZE_ROWS: number;
/** `openfga migrate` against CAPTURE_LEDGER_FGA_DATABASE_URL, then the tuple table's analyze threshold; answers the log's path. */
export declare function fgaMigrate(opts?: { timeoutMs?: number }): Promise<string>;
