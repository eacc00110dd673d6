// What the receiver accepts as a dispatch: the contract's shape (JSON schema, checked by fastify)
// and the checks a schema cannot say (http(s) URLs, notBefore dates).
import { CAPTURE_FORMATS, type DispatchBody } from '../domain/contract.ts';
import { parseNotBefore } from './level.ts';

export const dispatchSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['crawlId', 'depth', 'orgId', 'reportUrl', 'formats', 'signing', 'perHostDelayMs', 'hostParallelism', 'notBefore', 'pages'],
  properties: {
    crawlId: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9._-]+$' },
    depth: { type: 'integer', minimum: 0 },
    orgId: { type: 'string', minLength: 1 },
    reportUrl: { type: 'string', minLength: 1 },
    formats: { type: 'array', minItems: 1, items: { type: 'string', enum: [...CAPTURE_FORMATS] } },
    signing: { type: 'boolean' },
    perHostDelayMs: { type: 'integer', minimum: 0 },
    hostParallelism: { type: 'integer', minimum: 1 },
    notBefore: { type: 'object', additionalProperties: { type: 'string' } },
    pages: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['url', 'follow'], properties: { url: { type: 'string', minLength: 1 }, follow: { type: 'boolean' } } },
    },
    capability: { type: 'string', minLength: 1, maxLength: 512 },
    // keys are `${artifactPrefix}<taskId>…`: relative, ends with '/', no empty/'.'/'..' segment
    artifactPrefix: { type: 'string', minLength: 2, maxLength: 1024, pattern: '^(?!/)(?!.*(^|/)\\.{1,2}/)(?!.*//).*/$' },
    deadline: { type: 'string', minLength: 1, maxLength: 64 },
    heartbeatUrl: { type: 'string', minLength: 1, maxLength: 2048 },
  },
} as const;

function httpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** What is wrong with a dispatch the schema let through, or undefined. */
export function validateDispatch(d: DispatchBody): { detail: string; urls?: string[] } | undefined {
  const bad = d.pages.filter((p) => !httpUrl(p.url)).map((p) => p.url);
  if (bad.length > 0) return { detail: 'pages must be http(s) URLs', urls: bad.slice(0, 20) };
  if (!httpUrl(d.reportUrl)) return { detail: 'reportUrl must be an http(s) URL' };
  try {
    parseNotBefore(d.notBefore);
  } catch (err) {
    return { detail: (err as Error).message };
  }
  return undefined;
}
