// The Host check (src/domain/host-header.ts) as a fastify onRequest hook: a request naming a host
// the server is not configured for is answered 421 before routing, body parsing or identity.
// The allowed names come from the address the server actually listens on (a test's port 0
// becomes its real port), so they are worked out at the first request.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allowedHosts, checkHost, type HostDecision, type HostKey } from '../domain/host-header.ts';

export interface HostCheckOptions {
  /** the URLs the server is reached at from outside (its public URL, behind a proxy) */
  publicUrls?: readonly string[];
  /** a further condition on an allowed Host, per request (the issuer's /token: loopback only) */
  refine?: (request: FastifyRequest, hostname: string) => HostDecision;
  /** names answered beyond the configured ones, on the same ports (replay's archive origins) */
  alsoAnswers?: (hostname: string) => boolean;
}

function boundAddress(app: FastifyInstance): { host: string; port: number } | undefined {
  const address = app.server.address() as AddressInfo | string | null;
  return address === null || typeof address === 'string' ? undefined : { host: address.address, port: address.port };
}

/** Adds the check to `app` (call before registering routes or other onRequest hooks). */
export function useHostCheck(app: FastifyInstance, opts: HostCheckOptions = {}): void {
  let allowed: Set<HostKey> | undefined;
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    allowed ??= allowedHosts(boundAddress(app), opts.publicUrls);
    let decision = checkHost(request.headers.host, allowed, opts.alsoAnswers);
    if (decision.ok && opts.refine !== undefined) decision = opts.refine(request, decision.hostname);
    if (decision.ok) return;
    request.log.info({ host: request.headers.host, status: decision.status }, 'host refused');
    return reply.code(decision.status).send({ error: decision.error });
  });
}
