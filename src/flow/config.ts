// The capture tier's own settings, read and checked at startup like the ledger's: the receiver
// (npm run flow) and the capture worker (npm run capture-worker) each take only what their job
// needs. A capture worker holds Temporal's address, namespace and queue, the S3 endpoint and
// bucket with an identity that may only write there, and the capture allowlist: no database, no
// OpenFGA, no webhook token, no signing key of the ledger.
import { AllowlistError, parseAllowlist, type AllowEntry } from '../domain/address-policy.ts';
import { CAPTURE_TASK_QUEUE, FLOW_NAMESPACE, FLOW_TASK_QUEUE } from './names.ts';

type Env = Record<string, string | undefined>;

export class FlowConfigError extends Error {
  override name = 'FlowConfigError';
  constructor(variable: string, value: string | undefined, why: string) {
    super(`${variable}=${JSON.stringify(value ?? '')}: ${why}`);
  }
}

export type FlowIdentity = { mode: 'oidc'; issuer: string; flowClientSecret?: string } | { mode: 'dev' } | { mode: 'none' };

export interface FlowConfig {
  port: number;
  webhookToken: string;
  temporal: { address: string; namespace: string; flowQueue: string; captureQueue: string };
  /** how the flow proves itself to the ledger when it reports */
  identity: FlowIdentity;
}

export interface CaptureWorkerConfig {
  /** names the worker in every manifest it writes (software) */
  name: string;
  /** pages captured at once */
  slots: number;
  temporal: { address: string; namespace: string; captureQueue: string };
  s3: { endpoint: string; region: string; bucket: string; accessKeyId: string; secretAccessKey: string };
  capture: { allow: AllowEntry[]; deniedPorts: number[] };
}

/** The stack's default ports (.env.example), denied to captures when the worker is told none. */
export const DEFAULT_DENIED_PORTS = [
  7070, 7071, 7072, 7233, 7243, 8080, 8081, 8233, 8333, 8334, 8335, 8336, 8899, 9200, 9300, 18333, 18334, 18335, 18336, 55432,
];

const value = (env: Env, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
};

function required(env: Env, name: string, why: string): string {
  const v = value(env, name);
  if (v === undefined) throw new FlowConfigError(name, env[name], `required: ${why}`);
  return v;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new FlowConfigError(name, raw, `must be a whole number from ${min} to ${max}`);
  return Number(raw);
}

function httpUrl(env: Env, name: string, fallback?: string): string {
  const raw = value(env, name) ?? fallback;
  if (raw === undefined) throw new FlowConfigError(name, raw, 'required: an http(s) URL');
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new FlowConfigError(name, raw, 'must be an http(s) URL');
  }
  return raw;
}

export function loadFlowConfig(env: Env): FlowConfig {
  const issuer = value(env, 'CAPTURE_LEDGER_OIDC_ISSUER');
  const secret = value(env, 'CAPTURE_LEDGER_FLOW_CLIENT_SECRET');
  const identity: FlowIdentity =
    issuer !== undefined
      ? { mode: 'oidc', issuer: httpUrl(env, 'CAPTURE_LEDGER_OIDC_ISSUER'), ...(secret !== undefined ? { flowClientSecret: secret } : {}) }
      : value(env, 'CAPTURE_LEDGER_DEV_IDENTITY') === '1'
        ? { mode: 'dev' }
        : { mode: 'none' };
  return {
    port: int(env, 'CAPTURE_LEDGER_FLOW_PORT', 7072, 0, 65535),
    webhookToken: required(env, 'CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN', 'the capture flow checks it on every dispatch and cannot run without it'),
    temporal: {
      address: value(env, 'CAPTURE_FLOW_TEMPORAL_ADDRESS') ?? '127.0.0.1:7233',
      namespace: value(env, 'CAPTURE_FLOW_TEMPORAL_NAMESPACE') ?? FLOW_NAMESPACE,
      flowQueue: value(env, 'CAPTURE_FLOW_TASK_QUEUE') ?? FLOW_TASK_QUEUE,
      captureQueue: value(env, 'CAPTURE_WORKER_TASK_QUEUE') ?? CAPTURE_TASK_QUEUE,
    },
    identity,
  };
}

function allowlist(env: Env): AllowEntry[] {
  const raw = value(env, 'CAPTURE_WORKER_CAPTURE_ALLOW') ?? '';
  try {
    return parseAllowlist(raw);
  } catch (err) {
    if (err instanceof AllowlistError) throw new FlowConfigError('CAPTURE_WORKER_CAPTURE_ALLOW', raw, err.message);
    throw err;
  }
}

function ports(env: Env): number[] {
  const raw = value(env, 'CAPTURE_WORKER_DENIED_PORTS');
  if (raw === undefined) return DEFAULT_DENIED_PORTS;
  const list = raw.split(',').map((p) => p.trim());
  if (!list.every((p) => /^\d+$/.test(p) && Number(p) >= 1 && Number(p) <= 65535))
    throw new FlowConfigError('CAPTURE_WORKER_DENIED_PORTS', raw, 'must be ports (1–65535), comma separated');
  return [...new Set(list.map(Number))].sort((a, b) => a - b);
}

export function loadCaptureWorkerConfig(env: Env, fallbackName: string): CaptureWorkerConfig {
  return {
    name: value(env, 'CAPTURE_WORKER_NAME') ?? fallbackName,
    slots: int(env, 'CAPTURE_WORKER_SLOTS', 4, 1, 64),
    temporal: {
      address: value(env, 'CAPTURE_WORKER_TEMPORAL_ADDRESS') ?? '127.0.0.1:7233',
      namespace: value(env, 'CAPTURE_WORKER_TEMPORAL_NAMESPACE') ?? FLOW_NAMESPACE,
      captureQueue: value(env, 'CAPTURE_WORKER_TASK_QUEUE') ?? CAPTURE_TASK_QUEUE,
    },
    s3: {
      endpoint: httpUrl(env, 'CAPTURE_WORKER_S3_ENDPOINT'),
      region: value(env, 'CAPTURE_WORKER_S3_REGION') ?? 'us-east-1',
      bucket: required(env, 'CAPTURE_WORKER_S3_BUCKET', 'the bucket captures are written to'),
      accessKeyId: required(env, 'CAPTURE_WORKER_S3_ACCESS_KEY_ID', "the capture worker's write-only S3 identity"),
      secretAccessKey: required(env, 'CAPTURE_WORKER_S3_SECRET_ACCESS_KEY', "the capture worker's write-only S3 identity"),
    },
    capture: { allow: allowlist(env), deniedPorts: ports(env) },
  };
}

/** A loader for entry points: a bad value prints its one message, prefixed with the process it
 * stopped, and exits 1, without a stack. */
export function orExit<T>(who: string, load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof FlowConfigError)) throw err;
    console.error(`${who}: ${err.message}`);
    process.exit(1);
  }
}
