// What a printed figure goes through: its rounding, and the machine's load beside it. Every bench
// prints that load as `load1` (docs/benchmarks.md), read when its measurement starts, so a figure
// is always reported with the load it ran under. Nothing here opens a store: the Chromium benches
// import it too.
import { loadavg } from 'node:os';

export const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** The one-minute load average now, to two places. */
export const load1Now = (): number => round(loadavg()[0]!, 2);
