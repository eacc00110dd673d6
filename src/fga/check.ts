// One OpenFGA Check over a keep-alive HTTP connection, for the single-object decisions on the hot
// path (signing, can_submit). The request and answer are OpenFGA's documented HTTP API
// (POST /stores/{store_id}/check), the body exactly what the SDK's client.check sends; going
// around the SDK's axios stack (interceptors, follow-redirects, telemetry) removes most of the
// API's CPU spent on the question. Failures behave as the SDK's do: 400/401/403/404/422 are thrown
// at once with OpenFGA's status and message; 429, 5xx (not 501) and network errors are retried up
// to 3 times with the SDK's backoff (100 ms × 2^n, jittered), then thrown.
import http from 'node:http';
import https from 'node:https';
import type { OpenFgaClient } from '@openfga/sdk';

export interface CheckQuestion {
  user: string;
  relation: string;
  object: string;
  contextualTuples: { user: string; relation: string; object: string }[];
  context: Record<string, unknown>;
}

export interface CheckEndpoint {
  /** OpenFGA's answer: allowed or not */
  check(q: CheckQuestion): Promise<boolean>;
  /** the JSON body check sends for q (HIGHER_CONSISTENCY, the pinned model) */
  requestBody(q: CheckQuestion): string;
}

/** An answer OpenFGA gave that is not a decision; statusCode is OpenFGA's. */
export class FgaCheckError extends Error {
  override name = 'FgaCheckError';
  readonly statusCode: number | undefined;
  constructor(message: string, statusCode: number | undefined) {
    super(message);
    this.statusCode = statusCode;
  }
}

const MAX_RETRY = 3;
const MIN_WAIT_MS = 100;
const TIMEOUT_MS = 10_000;

export function createCheckEndpoint(opts: { apiUrl: string; storeId: string; modelId: string }): CheckEndpoint {
  const base = new URL(opts.apiUrl);
  const secure = base.protocol === 'https:';
  const transport = secure ? https : http;
  const agent = new transport.Agent({ keepAlive: true, maxSockets: 64 });
  const path = `${base.pathname.replace(/\/+$/, '')}/stores/${encodeURIComponent(opts.storeId)}/check`;
  const target = { protocol: base.protocol, hostname: base.hostname, port: base.port === '' ? (secure ? 443 : 80) : Number(base.port), path, method: 'POST', agent, timeout: TIMEOUT_MS };

  const once = (body: string): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = transport.request({ ...target, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });

  const requestBody = (q: CheckQuestion): string =>
    JSON.stringify({
      tuple_key: { user: q.user, relation: q.relation, object: q.object },
      context: q.context,
      contextual_tuples: { tuple_keys: q.contextualTuples },
      authorization_model_id: opts.modelId,
      consistency: 'HIGHER_CONSISTENCY',
    });

  const check = async (q: CheckQuestion): Promise<boolean> => {
    const body = requestBody(q);
    for (let attempt = 1; ; attempt++) {
      let answer: { status: number; text: string } | undefined;
      let failure: Error | undefined;
      try {
        answer = await once(body);
      } catch (err) {
        failure = err as Error;
      }
      if (answer?.status === 200) return (JSON.parse(answer.text) as { allowed?: boolean }).allowed === true;
      const status = answer?.status;
      const retryable = status === undefined || status === 429 || (status >= 500 && status !== 501);
      if (!retryable || attempt > MAX_RETRY) {
        const message = answer !== undefined ? messageOf(answer.text) : failure!.message;
        throw new FgaCheckError(`OpenFGA check failed${status !== undefined ? ` (${status})` : ''}: ${message}`, status);
      }
      const min = 2 ** attempt * MIN_WAIT_MS;
      await new Promise((r) => setTimeout(r, min + Math.floor(Math.random() * min)));
    }
  };
  return { check, requestBody };
}

function messageOf(text: string): string {
  try {
    const m = (JSON.parse(text) as { message?: unknown }).message;
    if (typeof m === 'string') return m;
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 200);
}

const endpoints = new WeakMap<OpenFgaClient, CheckEndpoint | null>();

/**
 * The lean check for this SDK client (same server, store and pinned model), made once per client;
 * null when the client authenticates (credentials other than none) or pins no store or model, and
 * the SDK must ask.
 */
export function checkEndpointOf(fga: OpenFgaClient): CheckEndpoint | null {
  let endpoint = endpoints.get(fga);
  if (endpoint === undefined) {
    // the SDK keeps its configuration protected; apiUrl and credentials are plain fields on it
    const conf = (fga as unknown as { configuration?: { apiUrl?: string; credentials?: { method?: string } } }).configuration;
    const plain = conf?.credentials?.method === undefined || conf.credentials.method === 'none';
    endpoint = plain && conf?.apiUrl && fga.storeId && fga.authorizationModelId ? createCheckEndpoint({ apiUrl: conf.apiUrl, storeId: fga.storeId, modelId: fga.authorizationModelId }) : null;
    endpoints.set(fga, endpoint);
  }
  return endpoint;
}
