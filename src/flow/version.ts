// What the capture tier calls itself in manifests, WACZ files and its requests.
export const FLOW_VERSION = '0.2.0';
export const CAPTURE_SOFTWARE = `capture-ledger-capture-worker/${FLOW_VERSION}`;
export const CAPTURE_USER_AGENT = `capture-ledger-flow/${FLOW_VERSION} (+reference capture flow)`;
