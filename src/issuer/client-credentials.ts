// POST /token with grant_type=client_credentials (RFC 6749 §4.4): the capture flow's token, minted
// only for the flow's client id with the flow's secret, by Basic auth or in the form (never
// both). Answers as §5.2 says: 400 invalid_request / unsupported_grant_type, 401 invalid_client.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { FLOW_CLIENT_ID, parseBasicAuthorization, type ClientCredentials } from '../domain/flow-client.ts';

export const FORM = 'application/x-www-form-urlencoded';

/** The form a client sends; other parameters are ignored (§3.2). */
export interface TokenForm {
  grant_type: string;
  client_id?: string;
  client_secret?: string;
  [parameter: string]: string | undefined;
}

const param = (maxLength: number) => ({ type: 'string', maxLength }) as const;
export const TOKEN_FORM_SCHEMA = {
  type: 'object',
  properties: { grant_type: param(64), client_id: param(200), client_secret: param(512) },
  required: ['grant_type'],
  additionalProperties: param(2000),
} as const;

export type GrantOutcome = { ok: true } | { ok: false; status: 400 | 401; error: string; description: string };

/** Parses form bodies into one string per parameter; a parameter given twice is a 400 (§3.2). */
export function addFormParser(app: FastifyInstance): void {
  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: 8 * 1024 }, (_request, body, done) => {
    const out: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(body as string)) {
      if (k in out) return done(Object.assign(new Error(`the parameter ${k} is given more than once`), { statusCode: 400 }), undefined);
      out[k] = v;
    }
    done(null, out);
  });
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

function credentialsOf(form: TokenForm, authorization: string | undefined): ClientCredentials | GrantOutcome {
  const basic = parseBasicAuthorization(authorization);
  const inForm = form.client_id !== undefined || form.client_secret !== undefined;
  if (basic === null)
    return { ok: false, status: 401, error: 'invalid_client', description: 'the Basic credentials are not base64 of client_id:client_secret' };
  if (basic !== undefined && inForm)
    return { ok: false, status: 400, error: 'invalid_request', description: 'client credentials both in the Authorization header and in the form: use one' };
  if (basic !== undefined) return basic;
  if (form.client_id === undefined || form.client_secret === undefined)
    return { ok: false, status: 401, error: 'invalid_client', description: 'client_id and client_secret are required (in the form, or as Basic credentials)' };
  return { id: form.client_id, secret: form.client_secret };
}

/** Whether this request may have the flow's token, given the secret the issuer holds. */
export function checkFlowGrant(form: TokenForm, authorization: string | undefined, flowSecret: string | undefined): GrantOutcome {
  if (form.grant_type !== 'client_credentials')
    return { ok: false, status: 400, error: 'unsupported_grant_type', description: 'the dev issuer grants client_credentials only' };
  const creds = credentialsOf(form, authorization);
  if ('ok' in creds) return creds;
  const refused = { ok: false, status: 401, error: 'invalid_client', description: `unknown client, or a wrong secret` } as const;
  if (flowSecret === undefined) return { ...refused, description: 'this issuer has no client secret configured (CAPTURE_LEDGER_FLOW_CLIENT_SECRET)' };
  // compared as digests: constant time, whatever the lengths
  const secretOk = timingSafeEqual(digest(creds.secret), digest(flowSecret));
  return creds.id === FLOW_CLIENT_ID && secretOk ? { ok: true } : refused;
}
