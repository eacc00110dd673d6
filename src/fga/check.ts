// One OpenFGA Check over a keep-alive HTTP connection, for the single-object decisions on the hot
// path (signing, can_submit). The request and answer are OpenFGA's documented HTTP API
// (POST /stores/{store_id}/check), the body exactly what the SDK's client.check sends; going
// around the SDK's axios stack (interceptors, follow-redirects, telemetry) removes most of the
// API's CPU spent on the question. Failures behave as the SDK's do: 400/401/403/404/422 are thrown
// at once with OpenFGA's status and message; 429, 5xx (not 501) and network errors are retried up
// to 3 times with the SDK's backoff (100 ms × 2^n, jittered), then thrown.
//
// `decide` asks the same question, coalesced with the others in flight (src/domain/coalescer.ts)
// into one POST /stores/{store_id}/batch-check: OpenFGA's per-request cost (HTTP, gateway, JSON)
// is then paid once per batch (measured here: 1,126–1,248 checks/s as single Checks at 32 callers,
// 1,440–1,730 as batches of 16 with 2 in flight). Each check keeps its own tuple key, contextual
// tuples and context; the batch is HIGHER_CONSISTENCY on the pinned model, and a question is only
// sent after it was asked. A question that could spoil the whole batch (OpenFGA validates every
// check's strings and counts before answering any: one bad one is a 400 for all), a batch refused
// as a whole with a 4xx, and an item answered with an error are asked again as single Checks, so
// each caller gets exactly the answer or the error its single Check gives.
import http from 'node:http';
import https from 'node:https';
import type { OpenFgaClient } from '@openfga/sdk';
import { createCoalescer } from '../domain/coalescer.ts';

export interface CheckQuestion {
  user: string;
  relation: string;
  object: string;
  contextualTuples: { user: string; relation: string; object: string }[];
  context: Record<string, unknown>;
}

export interface CheckEndpoint {
  /** OpenFGA's answer: allowed or not (one Check) */
  check(q: CheckQuestion): Promise<boolean>;
  /** the same answer, asked within a batch of the questions in flight (one BatchCheck) */
  decide(q: CheckQuestion): Promise<boolean>;
  /** the JSON body check sends for q (HIGHER_CONSISTENCY, the pinned model) */
  requestBody(q: CheckQuestion): string;
  /** the JSON body decide sends for a batch (correlation ids are the positions) */
  batchRequestBody(qs: CheckQuestion[]): string;
  /**
   * One BatchCheck of up to MAX_BATCH_CHECKS questions at MINIMIZE_LATENCY (lists and search,
   * which OpenFGA's caches may answer), not coalesced: per question its decision, or undefined
   * where OpenFGA answered that item with an error.
   */
  batchCheckCached(qs: CheckQuestion[]): Promise<(boolean | undefined)[]>;
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
/** OpenFGA's --max-checks-per-batch-check default */
export const MAX_BATCH_CHECKS = 50;
/** batches out at once: with 32 callers, 2 gave batches of ~16, the best measured per check */
export const BATCHES_IN_FLIGHT = 2;
// OpenFGA's validation rules for a check's strings and counts (its protobuf validators; a test
// in fga-batch-check.test.ts holds batchable() to what the real server refuses)
const USER = /^[^\s]{2,512}$/;
const OBJECT = /^[^\s]{2,256}$/;
const RELATION = /^[^:#@\s]{1,50}$/;
const MAX_CONTEXTUAL_TUPLES = 100;

/** Whether OpenFGA would accept q's strings and counts, so q cannot spoil a batch it joins. */
export function batchable(q: CheckQuestion): boolean {
  return (
    USER.test(q.user) &&
    RELATION.test(q.relation) &&
    OBJECT.test(q.object) &&
    q.contextualTuples.length <= MAX_CONTEXTUAL_TUPLES &&
    q.contextualTuples.every((t) => USER.test(t.user) && RELATION.test(t.relation) && OBJECT.test(t.object))
  );
}

type Post = (path: string, body: string, what: string) => Promise<string>;

/** One POST over a keep-alive agent: its status and text. */
function createOnce(base: URL): (path: string, body: string) => Promise<{ status: number; text: string }> {
  const secure = base.protocol === 'https:';
  const transport = secure ? https : http;
  const agent = new transport.Agent({ keepAlive: true, maxSockets: 64 });
  const target = {
    protocol: base.protocol,
    hostname: base.hostname,
    port: base.port === '' ? (secure ? 443 : 80) : Number(base.port),
    method: 'POST',
    agent,
    timeout: TIMEOUT_MS,
  };
  return (path, body) =>
    new Promise((resolve, reject) => {
      const req = transport.request({ ...target, path, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
}

/** POST body to path until a 200, retrying as the SDK does; its text, or FgaCheckError. */
function createPost(base: URL): Post {
  const once = createOnce(base);
  return async (path, body, what) => {
    for (let attempt = 1; ; attempt++) {
      let answer: { status: number; text: string } | undefined;
      let failure: Error | undefined;
      try {
        answer = await once(path, body);
      } catch (err) {
        failure = err as Error;
      }
      if (answer?.status === 200) return answer.text;
      const status = answer?.status;
      const retryable = status === undefined || status === 429 || (status >= 500 && status !== 501);
      if (!retryable || attempt > MAX_RETRY) {
        const message = answer !== undefined ? messageOf(answer.text) : failure!.message;
        throw new FgaCheckError(`OpenFGA ${what} failed${status !== undefined ? ` (${status})` : ''}: ${message}`, status);
      }
      const min = 2 ** attempt * MIN_WAIT_MS;
      await new Promise((r) => setTimeout(r, min + Math.floor(Math.random() * min)));
    }
  };
}

const tupleKey = (q: CheckQuestion) => ({ user: q.user, relation: q.relation, object: q.object });

function checkRequestBody(q: CheckQuestion, modelId: string): string {
  return JSON.stringify({
    tuple_key: tupleKey(q),
    context: q.context,
    contextual_tuples: { tuple_keys: q.contextualTuples },
    authorization_model_id: modelId,
    consistency: 'HIGHER_CONSISTENCY',
  });
}

function batchCheckRequestBody(qs: CheckQuestion[], modelId: string, consistency = 'HIGHER_CONSISTENCY'): string {
  return JSON.stringify({
    checks: qs.map((q, i) => ({
      tuple_key: tupleKey(q),
      contextual_tuples: { tuple_keys: q.contextualTuples },
      context: q.context,
      correlation_id: String(i),
    })),
    authorization_model_id: modelId,
    consistency,
  });
}

/** One BatchCheck: per question its decision, or undefined where OpenFGA answered that item with an error. */
type BatchCheck = (qs: CheckQuestion[]) => Promise<(boolean | undefined)[]>;

/**
 * The batchable questions' answers from one BatchCheck (undefined where a question must ask
 * alone). Refused as a whole for what one check holds (a 4xx): each asks alone; unavailable or
 * still limited after the retries (5xx, 429, no answer): every question fails with it.
 */
async function batchedAnswers(qs: CheckQuestion[], batchCheck: BatchCheck): Promise<(boolean | undefined)[]> {
  const answers: (boolean | undefined)[] = qs.map(() => undefined);
  const inBatch = qs.flatMap((q, i) => (batchable(q) ? [i] : []));
  if (inBatch.length <= 1) return answers;
  try {
    const batched = await batchCheck(inBatch.map((i) => qs[i]!));
    inBatch.forEach((i, k) => (answers[i] = batched[k]));
  } catch (err) {
    const refused = err instanceof FgaCheckError && err.statusCode !== undefined && err.statusCode < 500 && err.statusCode !== 429;
    if (!refused) throw err;
  }
  return answers;
}

export function createCheckEndpoint(opts: { apiUrl: string; storeId: string; modelId: string; maxBatch?: number; batchesInFlight?: number }): CheckEndpoint {
  const base = new URL(opts.apiUrl);
  const post = createPost(base);
  const storePath = `${base.pathname.replace(/\/+$/, '')}/stores/${encodeURIComponent(opts.storeId)}`;
  const requestBody = (q: CheckQuestion): string => checkRequestBody(q, opts.modelId);
  const batchRequestBody = (qs: CheckQuestion[]): string => batchCheckRequestBody(qs, opts.modelId);

  const check = async (q: CheckQuestion): Promise<boolean> =>
    (JSON.parse(await post(`${storePath}/check`, requestBody(q), 'check')) as { allowed?: boolean }).allowed === true;
  const batchCheckWith = async (qs: CheckQuestion[], body: string): Promise<(boolean | undefined)[]> => {
    const { result } = JSON.parse(await post(`${storePath}/batch-check`, body, 'batch check')) as {
      result?: Record<string, { allowed?: boolean; error?: unknown }>;
    };
    return qs.map((_, i) => {
      const item = result?.[String(i)];
      return item === undefined || item.error !== undefined ? undefined : item.allowed === true;
    });
  };
  const batchCheck: BatchCheck = (qs) => batchCheckWith(qs, batchRequestBody(qs));
  const batchCheckCached: BatchCheck = (qs) => batchCheckWith(qs, batchCheckRequestBody(qs, opts.modelId, 'MINIMIZE_LATENCY'));

  /** Each question's single Check: its answer, or the error it gives. */
  const singly = (qs: CheckQuestion[]): Promise<(boolean | Error)[]> => Promise.all(qs.map((q) => check(q).catch((err: unknown) => err as Error)));
  const sendBatch = async (qs: CheckQuestion[]): Promise<(boolean | Error)[]> => {
    if (qs.length === 1) return singly(qs);
    const answers = await batchedAnswers(qs, batchCheck);
    const rest = qs.flatMap((q, i) => (answers[i] === undefined ? [i] : []));
    const alone = await singly(rest.map((i) => qs[i]!));
    const out: (boolean | Error)[] = answers.map((a) => a ?? false);
    rest.forEach((i, k) => (out[i] = alone[k]!));
    return out;
  };

  const decide = createCoalescer(sendBatch, { maxBatch: opts.maxBatch ?? MAX_BATCH_CHECKS, maxInFlight: opts.batchesInFlight ?? BATCHES_IN_FLIGHT });
  return { check, decide, requestBody, batchRequestBody, batchCheckCached };
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
    endpoint =
      plain && conf?.apiUrl && fga.storeId && fga.authorizationModelId
        ? createCheckEndpoint({ apiUrl: conf.apiUrl, storeId: fga.storeId, modelId: fga.authorizationModelId })
        : null;
    endpoints.set(fga, endpoint);
  }
  return endpoint;
}
