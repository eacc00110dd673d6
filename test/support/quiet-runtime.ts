// Temporal's worker runtime, quiet: the tests and benches start workers whose own logs would bury
// what they print. CAPTURE_LEDGER_TEST_LOG set keeps the logs.
import { Runtime } from '@temporalio/worker';

/** A logger that drops everything (the shape of Temporal's Logger). */
export const SILENT_LOGGER = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

let installed = false;

/** Installs the quiet runtime, once a process; one installed before (by anyone) is left as it is. */
export function quietRuntime(): void {
  if (installed || process.env.CAPTURE_LEDGER_TEST_LOG) return;
  installed = true;
  try {
    Runtime.install({ logger: SILENT_LOGGER as never, telemetryOptions: { logging: { filter: 'ERROR', forward: {} } } });
  } catch {
    // a runtime is installed already in this process
  }
}
