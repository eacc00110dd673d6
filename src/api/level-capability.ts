// The gate in front of every call the capture flow makes about one level (its report, its
// heartbeats): the per-level capability the dispatch carried, compared in constant time against
// the digests the ledger kept, AND a valid token of any identity. No grant on the crawl's
// organization is asked for: the capability is what ties the call to its dispatch.
//
//   no valid token, no matching capability → 401 {"error":"unauthenticated"} (as any /api route)
//   a valid token, no matching capability  → 403, the body names what is missing or wrong
//   the capability, but the token refused  → 401, and onTokenRefused runs (the crawl fails at
//                                            once instead of waiting out its level timeout)
//
// Runs as the route's onRequest hook, before the body is read: nothing of a refused call is parsed
// or stored. Routes using it are `config: { public: true }` so the identity plugin lets them through.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../db/connect.ts';
import { CAPABILITY_HEADER } from '../domain/contract.ts';
import { BadRequestError, ForbiddenError, UnauthenticatedError } from './errors.ts';
import { isUuid } from '../domain/uuid.ts';
import { levelPresenting, type LevelDispatch } from '../ledger/level.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** the dispatch whose capability the call presented (set by levelCapabilityGate) */
    levelDispatch: LevelDispatch | null;
  }
}

export interface LevelGateOptions {
  db: Db;
  /** what the call is, for the answers: "report", "heartbeat" */
  what: string;
  /** the capability matched but the token was refused; errors are logged, never answered */
  onTokenRefused?: (crawlId: string, depth: number, reason: string) => Promise<void>;
}

const DEPTH = /^\d{1,4}$/;

function presentedCapability(request: FastifyRequest): string | undefined {
  const v = request.headers[CAPABILITY_HEADER];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** Call once in each plugin whose routes use the gate (harmless when already decorated). */
export function decorateLevelDispatch(app: FastifyInstance): void {
  if (!app.hasRequestDecorator('levelDispatch')) app.decorateRequest('levelDispatch', null);
}

/** The URL's level, when both its parameters are well formed. */
function levelOfParams(request: FastifyRequest): { crawlId: string; depth: number } | undefined {
  const params = request.params as { id?: unknown; depth?: unknown };
  if (typeof params.id !== 'string' || !isUuid(params.id) || typeof params.depth !== 'string' || !DEPTH.test(params.depth)) return undefined;
  return { crawlId: params.id.toLowerCase(), depth: Number(params.depth) };
}

export function levelCapabilityGate(opts: LevelGateOptions) {
  return async function levelGate(request: FastifyRequest): Promise<void> {
    request.levelDispatch = null;
    const level = levelOfParams(request);
    const presented = presentedCapability(request);
    const dispatch = level === undefined ? undefined : await levelPresenting(opts.db, level.crawlId, level.depth, presented);
    if (dispatch === undefined) return refuseCapability(request, opts, level, presented !== undefined);
    if (request.identity === null) return refuseToken(request, opts, dispatch);
    request.levelDispatch = dispatch;
  };
}

/** No matching capability: 401 without a valid token, else 403 (malformed parameters are left to the schema's 400). */
function refuseCapability(request: FastifyRequest, opts: LevelGateOptions, level: { crawlId: string; depth: number } | undefined, presented: boolean): void {
  if (request.identity === null) {
    request.log.info({ reason: request.identityRefusal }, 'unauthenticated');
    throw new UnauthenticatedError(request.identityRefusal ?? 'unauthenticated');
  }
  if (level === undefined) return;
  request.log.warn({ ...level, presented }, `level ${opts.what} refused: capability`);
  throw new ForbiddenError('capability refused', {
    detail: !presented
      ? `a level ${opts.what} must carry its dispatch's capability in the ${CAPABILITY_HEADER} header`
      : `the ${CAPABILITY_HEADER} header matches no dispatch of level ${level.depth} of this crawl`,
  });
}

/** The level's capability with a refused token: the crawl is told (it fails at once), and the call gets 401. */
async function refuseToken(request: FastifyRequest, opts: LevelGateOptions, { crawlId, depth }: LevelDispatch): Promise<never> {
  const reason = request.identityRefusal ?? 'unauthenticated';
  request.log.warn({ crawlId, depth, reason }, `level ${opts.what} carried its capability but its token was refused: failing the crawl`);
  await opts
    .onTokenRefused?.(crawlId, depth, reason)
    .catch((err: unknown) => request.log.error({ err, crawlId, depth }, 'could not tell the crawl its report was refused'));
  throw new UnauthenticatedError(reason, `the ${opts.what} carried level ${depth}'s capability but its token was refused (${reason}); the crawl fails`);
}

/**
 * The dispatch levelCapabilityGate found for a request whose body names its level (a report, a
 * heartbeat): 403 without one, 400 when the body's depth is not the URL's.
 */
export function dispatchedLevel(request: { levelDispatch: LevelDispatch | null; params: { depth: number }; body: { depth: number } }): LevelDispatch {
  const dispatch = request.levelDispatch;
  if (dispatch === null) throw new ForbiddenError('capability refused');
  const depth = request.params.depth;
  if (request.body.depth !== depth) {
    throw new BadRequestError('invalid request', { details: [{ field: 'body.depth', message: `must equal the level in the URL (${depth})` }] });
  }
  return dispatch;
}
