// Who is calling, decided once at startup (selectIdentity) and applied to every request by one
// plugin. Three resolvers:
//   none — nobody is authenticated: every /api route answers 401 {"error":"unauthenticated"};
//   dev  — trusts X-Capture-ledger-Subject / X-Capture-ledger-Organizations (development only);
//   oidc — Bearer JWTs verified with jose against the issuer's discovery document and JWKS.
// When an issuer is configured the JWT resolver wins and the dev headers are ignored, even if the
// dev flag is also set: a deployment with both must not fall to the weaker one.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { Config } from '../config/env.ts';
import { identityFromClaims, identityFromDevHeaders, IdentityClaimError } from '../config/identity.ts';
import { ServiceUnavailableError, UnauthenticatedError } from './errors.ts';
import type { Identity } from '../domain/identity.ts';
import { verifiedTokens } from './verified-tokens.ts';

export type IdentityMode = Config['identity']['mode'];

export const SUBJECT_HEADER = 'x-capture-ledger-subject';
export const ORGANIZATIONS_HEADER = 'x-capture-ledger-organizations';

/** Only asymmetric algorithms: `none` and HMAC (which a public key could be abused as) are refused. */
export const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** Leeway on exp and nbf, in seconds. */
const CLOCK_TOLERANCE_S = 5;

/** Tokens longer than this are refused before any parsing. */
export const MAX_TOKEN_LENGTH = 8192;

/** The identity provider could not be asked (discovery or JWKS unreachable): 503, not 401. */
export class IdentityProviderUnavailableError extends ServiceUnavailableError {
  override name = 'IdentityProviderUnavailableError';
  constructor(message: string, options?: ErrorOptions) {
    super('identity provider unavailable', message, options);
  }
}

/** Result of resolving one request: an identity, or null with the reason (logged, never sent). */
export interface Resolution {
  identity: Identity | null;
  reason?: string;
}

export interface IdentityResolver {
  mode: IdentityMode;
  resolve(headers: FastifyRequest['headers']): Promise<Resolution>;
}

export function noneResolver(): IdentityResolver {
  return { mode: 'none', resolve: async () => ({ identity: null, reason: 'no identity resolver configured' }) };
}

export function devResolver(): IdentityResolver {
  return {
    mode: 'dev',
    async resolve(headers) {
      try {
        const identity = identityFromDevHeaders(headers[SUBJECT_HEADER], headers[ORGANIZATIONS_HEADER]);
        return identity ? { identity } : { identity: null, reason: 'no subject header' };
      } catch (err) {
        return { identity: null, reason: (err as Error).message };
      }
    },
  };
}

interface Discovery {
  jwks: JWTVerifyGetKey;
}

/** Reads jwks_uri from `${issuer}/.well-known/openid-configuration` (jose does no discovery). */
export async function discover(issuer: string, fetchImpl: typeof fetch = fetch): Promise<Discovery> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let doc: { issuer?: unknown; jwks_uri?: unknown };
  try {
    const res = await fetchImpl(url, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    doc = (await res.json()) as typeof doc;
  } catch (err) {
    throw new IdentityProviderUnavailableError(`OIDC discovery at ${url} failed: ${(err as Error).message}`, { cause: err });
  }
  // OpenID Connect Discovery §4.3: the document's issuer must be identical to the one configured.
  if (doc.issuer !== issuer)
    throw new IdentityProviderUnavailableError(`OIDC discovery at ${url} names issuer ${JSON.stringify(doc.issuer)}, expected ${JSON.stringify(issuer)}`);
  if (typeof doc.jwks_uri !== 'string') throw new IdentityProviderUnavailableError(`OIDC discovery at ${url} has no jwks_uri`);
  return { jwks: createRemoteJWKSet(new URL(doc.jwks_uri), { timeoutDuration: 5000, cooldownDuration: 30_000 }) };
}

export function oidcResolver(opts: { issuer: string; audience: string; fetchImpl?: typeof fetch }): IdentityResolver {
  // Discovery happens on the first token and is cached once it succeeded; a failure is retried on
  // the next request, so the API can start before the issuer does.
  let discovery: Promise<Discovery> | undefined;
  const getDiscovery = (): Promise<Discovery> => {
    discovery ??= discover(opts.issuer, opts.fetchImpl).catch((err: unknown) => {
      discovery = undefined;
      throw err;
    });
    return discovery;
  };
  const verified = verifiedTokens(CLOCK_TOLERANCE_S * 1000);
  return {
    mode: 'oidc',
    async resolve(headers) {
      const auth = headers.authorization;
      if (auth === undefined) return { identity: null, reason: 'no authorization header' };
      const m = /^Bearer ([A-Za-z0-9_.~+/=-]+)$/.exec(auth);
      if (!m) return { identity: null, reason: 'authorization is not a Bearer token' };
      const token = m[1]!;
      if (token.length > MAX_TOKEN_LENGTH) return { identity: null, reason: 'token too long' };
      const { jwks } = await getDiscovery();
      const known = verified.get(token);
      if (known !== undefined) return { identity: known };
      try {
        const { payload } = await jwtVerify(token, jwks, {
          issuer: opts.issuer,
          audience: opts.audience,
          algorithms: ALLOWED_ALGORITHMS,
          requiredClaims: ['sub', 'exp'],
          clockTolerance: CLOCK_TOLERANCE_S,
        });
        const identity = identityFromClaims(payload);
        verified.remember(token, identity, payload.exp!);
        return { identity };
      } catch (err) {
        if (err instanceof joseErrors.JWKSTimeout) throw new IdentityProviderUnavailableError(`JWKS fetch timed out: ${err.message}`, { cause: err });
        if (err instanceof joseErrors.JOSEError || err instanceof IdentityClaimError) {
          return { identity: null, reason: `${err.name}: ${err.message}` };
        }
        throw err;
      }
    },
  };
}

/** Picks the resolver once, from configuration. JWT beats the dev headers. */
export function selectIdentity(identity: Config['identity'], log?: { warn(msg: string): void }): IdentityResolver {
  switch (identity.mode) {
    case 'oidc':
      if (identity.devIdentityAlsoSet)
        log?.warn('CAPTURE_LEDGER_DEV_IDENTITY is set but ignored: CAPTURE_LEDGER_OIDC_ISSUER is configured, so only Bearer JWTs are accepted');
      return oidcResolver({ issuer: identity.issuer, audience: identity.audience });
    case 'dev':
      log?.warn(
        '!!! DEV IDENTITY IS ON (CAPTURE_LEDGER_DEV_IDENTITY=1): the API trusts the X-Capture-ledger-Subject and X-Capture-ledger-Organizations headers. ' +
          'Anyone who can reach this port can claim to be anyone. Never run this way outside development. !!!',
      );
      return devResolver();
    case 'none':
      log?.warn('no identity configured (neither CAPTURE_LEDGER_OIDC_ISSUER nor CAPTURE_LEDGER_DEV_IDENTITY): every /api request will be 401');
      return noneResolver();
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity | null;
    /** why identity is null (for the log, and for a route that must say why it refused) */
    identityRefusal: string | null;
  }
  interface FastifyContextConfig {
    /** a route that needs no identity (the OpenAPI document, the picker page) */
    public?: boolean;
  }
}

/** The identity of the request, or 401. */
export function requireIdentity(request: FastifyRequest): Identity {
  if (request.identity === null) throw new UnauthenticatedError();
  return request.identity;
}

/**
 * Resolves request.identity on every request and answers 401 for any /api route (other than those
 * marked `config: { public: true }`) that has none, so a route cannot forget to authenticate.
 */
export const identityPlugin = fp(
  async function identityPlugin(app: FastifyInstance, opts: { resolver: IdentityResolver }) {
    app.decorateRequest('identity', null);
    app.decorateRequest('identityRefusal', null);
    app.addHook('onRequest', async (request) => {
      const { identity, reason } = await opts.resolver.resolve(request.headers);
      request.identity = identity;
      request.identityRefusal = identity === null ? (reason ?? 'unauthenticated') : null;
      const url = request.routeOptions.url;
      if (identity === null && url !== undefined && url.startsWith('/api/') && request.routeOptions.config.public !== true) {
        request.log.info({ reason }, 'unauthenticated');
        throw new UnauthenticatedError(reason);
      }
    });
  },
  { name: 'identity' },
);
