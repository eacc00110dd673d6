// A development OIDC issuer: it mints a short-lived token for ANY subject and organizations, so
// it listens on loopback only, refuses to start on anything else, and mints only for requests
// whose Host is its loopback address. Endpoints:
//   GET  /.well-known/openid-configuration   { issuer, jwks_uri, token_endpoint, ... }
//   GET  /jwks.json                          { keys: [public JWK] }
//   POST /token {subject, organizations?, ttlSeconds?}  → { access_token, token_type: "Bearer", expires_in }
//        (JSON, for people; never for the capture flow's subject, 403)
//   POST /token grant_type=client_credentials (form; the flow's client id and secret, by Basic
//        auth or in the form) → the capture flow's token: sub capture-flow, no organizations
// Claims: iss = the issuer URL exactly, aud, sub, organizations (string array), iat, exp.
import { isIP } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { SignJWT } from 'jose';
import { MAX_NAME_LENGTH } from '../config/identity.ts';
import { isLoopbackName, type HostDecision } from '../domain/host-header.ts';
import { useHostCheck } from '../http/host-check.ts';
import { FLOW_SUBJECT } from '../domain/flow-client.ts';
import { addFormParser, checkFlowGrant, FORM, TOKEN_FORM_SCHEMA, type TokenForm } from './client-credentials.ts';
import { generateIssuerKey, ISSUER_ALG, type IssuerKey } from './keys.ts';

export const DEFAULT_TTL_SECONDS = 300;
export const MAX_TTL_SECONDS = 3600;

export interface IssuerOptions {
  port: number;
  /** must be a loopback address: 127.0.0.1 (default), ::1 or localhost */
  host?: string;
  /** the `iss` claim and discovery issuer; default http://<host>:<bound port> */
  issuerUrl?: string;
  audience?: string;
  key?: IssuerKey;
  logger?: boolean;
  /** the capture flow's client secret (CAPTURE_LEDGER_FLOW_CLIENT_SECRET); unset: no client may have a token */
  flowClientSecret?: string;
}

export interface MintRequest {
  subject: string;
  organizations?: string[];
  ttlSeconds?: number;
}

export interface RunningIssuer {
  url: string;
  audience: string;
  key: IssuerKey;
  mint(req: MintRequest): Promise<string>;
  close(): Promise<void>;
  app: FastifyInstance;
}

export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

export async function signIssuerToken(
  key: IssuerKey,
  issuer: string,
  audience: string,
  req: MintRequest,
  now = Math.floor(Date.now() / 1000),
): Promise<string> {
  const ttl = req.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  return new SignJWT({ organizations: req.organizations ?? [] })
    .setProtectedHeader({ alg: ISSUER_ALG, kid: key.kid, typ: 'JWT' })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject(req.subject)
    .setIssuedAt(now)
    .setExpirationTime(now + ttl)
    .sign(key.privateKey);
}

/** A token is minted only for a request to the loopback address, whatever else the issuer answers for. */
function tokensOnLoopbackOnly(request: FastifyRequest, hostname: string): HostDecision {
  if (request.routeOptions.url !== '/token' || isLoopbackName(hostname)) return { ok: true, hostname };
  return { ok: false, status: 421, error: 'misdirected request: the dev issuer mints tokens only for requests to its loopback address' };
}

const name = { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, pattern: '^[^\\s#]+$' } as const;
const MINT_SCHEMA = {
  type: 'object',
  properties: {
    subject: name,
    organizations: { type: 'array', items: name, maxItems: 64 },
    ttlSeconds: { type: 'integer', minimum: 1, maximum: MAX_TTL_SECONDS },
  },
  required: ['subject'],
  additionalProperties: false,
} as const;

export async function startIssuer(opts: IssuerOptions): Promise<RunningIssuer> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopback(host)) throw new Error(`the dev issuer mints tokens for anyone and binds to loopback only, not ${host}`);
  const key = opts.key ?? (await generateIssuerKey());
  const audience = opts.audience ?? 'capture-ledger';
  const app = Fastify({ logger: opts.logger ?? false, ajv: { customOptions: { removeAdditional: false, coerceTypes: false } } });
  let issuerUrl = opts.issuerUrl ?? '';
  useHostCheck(app, { publicUrls: opts.issuerUrl === undefined ? [] : [opts.issuerUrl], refine: tokensOnLoopbackOnly });

  app.get('/.well-known/openid-configuration', async () => ({
    issuer: issuerUrl,
    jwks_uri: `${issuerUrl}/jwks.json`,
    token_endpoint: `${issuerUrl}/token`,
    response_types_supported: ['token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [ISSUER_ALG],
    claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'organizations'],
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  }));
  app.get('/jwks.json', async () => ({ keys: [key.publicJwk] }));
  addFormParser(app);
  const tokenAnswer = async (req: MintRequest) => {
    const ttl = req.ttlSeconds ?? DEFAULT_TTL_SECONDS;
    return { access_token: await signIssuerToken(key, issuerUrl, audience, { ...req, ttlSeconds: ttl }), token_type: 'Bearer', expires_in: ttl };
  };
  app.post<{ Body: MintRequest | TokenForm }>(
    '/token',
    { schema: { body: { content: { 'application/json': { schema: MINT_SCHEMA }, [FORM]: { schema: TOKEN_FORM_SCHEMA } } } } },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const body = request.body as MintRequest | TokenForm | undefined;
      if (typeof body !== 'object' || body === null) {
        return reply
          .code(400)
          .send({ error: 'invalid_request', error_description: `a body is required: JSON {"subject": …}, or a ${FORM} grant_type=client_credentials form` });
      }
      if ('grant_type' in body) {
        const grant = checkFlowGrant(body, request.headers.authorization, opts.flowClientSecret);
        if (!grant.ok) {
          if (grant.status === 401) reply.header('www-authenticate', 'Basic realm="capture-ledger dev issuer"');
          return reply.code(grant.status).send({ error: grant.error, error_description: grant.description });
        }
        return tokenAnswer({ subject: FLOW_SUBJECT });
      }
      if (body.subject === FLOW_SUBJECT) {
        return reply
          .code(403)
          .send({ error: `${FLOW_SUBJECT} is the capture flow's reporter: its token needs the flow's client secret (grant_type=client_credentials)` });
      }
      return tokenAnswer(body);
    },
  );

  const address = await app.listen({ host, port: opts.port });
  if (issuerUrl === '') issuerUrl = address.replace(/\/$/, '');
  const url = issuerUrl;
  return {
    url,
    audience,
    key,
    app,
    mint: (req) => signIssuerToken(key, url, audience, req),
    close: () => app.close(),
  };
}
