// The machine's load beside a bench's figures: every bench prints it as `load1` (docs/benchmarks.md),
// read when its measurement starts, so a figure is always reported with the load it ran under.
import { loadavg } from 'node:os';

/** The one-minute load average now, to two places. */
export const load1Now = (): number => Math.round(loadavg()[0]! * 100) / 100;
