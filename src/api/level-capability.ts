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
import { capabilityMatches } from '../ledger/capability.ts';
import { getDispatch, type LevelDispatch } from '../store/level-dispatches.ts';

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

export function levelCapabilityGate(opts: LevelGateOptions) {
  return async function levelGate(request: FastifyRequest): Promise<void> {
    request.levelDispatch = null;
    const params = request.params as { id?: unknown; depth?: unknown };
    const crawlId = typeof params.id === 'string' && isUuid(params.id) ? params.id.toLowerCase() : undefined;
    const depth = typeof params.depth === 'string' && DEPTH.test(params.depth) ? Number(params.depth) : undefined;
    const presented = presentedCapability(request);
    const dispatch = presented !== undefined && crawlId !== undefined && depth !== undefined ? await getDispatch(opts.db, crawlId, depth) : undefined;
    const matched = dispatch !== undefined && capabilityMatches(presented, dispatch.capabilityHashes);

    if (!matched) {
      if (request.identity === null) {
        request.log.info({ reason: request.identityRefusal }, 'unauthenticated');
        throw new UnauthenticatedError(request.identityRefusal ?? 'unauthenticated');
      }
      // malformed parameters: schema validation answers 400 naming them (the handler sees no dispatch)
      if (crawlId === undefined || depth === undefined) return;
      request.log.warn({ crawlId, depth, presented: presented !== undefined }, `level ${opts.what} refused: capability`);
      throw new ForbiddenError('capability refused', {
        detail:
          presented === undefined
            ? `a level ${opts.what} must carry its dispatch's capability in the ${CAPABILITY_HEADER} header`
            : `the ${CAPABILITY_HEADER} header matches no dispatch of level ${depth} of this crawl`,
      });
    }

    if (request.identity === null) {
      const reason = request.identityRefusal ?? 'unauthenticated';
      request.log.warn({ crawlId, depth, reason }, `level ${opts.what} carried its capability but its token was refused: failing the crawl`);
      if (opts.onTokenRefused !== undefined) {
        await opts
          .onTokenRefused(crawlId!, depth!, reason)
          .catch((err: unknown) => request.log.error({ err, crawlId, depth }, 'could not tell the crawl its report was refused'));
      }
      throw new UnauthenticatedError(reason, `the ${opts.what} carried level ${depth}'s capability but its token was refused (${reason}); the crawl fails`);
    }
    request.levelDispatch = dispatch;
  };
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
