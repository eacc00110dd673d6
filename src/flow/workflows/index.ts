// The capture tier's workflows (bundled for the flow worker; the ledger's are in src/workflows).
export { captureLevel } from './level.ts';
export { captureSlice } from './slice.ts';
