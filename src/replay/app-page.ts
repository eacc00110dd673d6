// The app's page and its service worker registration.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { archiveOrigin } from '../domain/replay-origin.ts';
import { isRegistrationQuery, serviceWorkerScript } from './service-worker.ts';
import { checkAppQuery } from './source.ts';

const queryOf = (url: string): string => {
  const q = url.indexOf('?');
  return q === -1 ? '' : url.slice(q + 1);
};

/**
 * The app's page: only with a source replay itself serves (checkAppQuery), and with an archive
 * domain only on that archive's own origin: anywhere else it is sent there (302). Opening an
 * archive also clears what replay stored on its origin before (IndexedDB, caches, the service
 * worker, cookies); on one shared origin that is what keeps one archive from reading another's.
 */
export function appPage(index: string, domain: string | undefined) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const checked = checkAppQuery(queryOf(req.url));
    if (!checked.ok) return reply.code(checked.status).header('cache-control', 'no-store').send({ error: checked.error });
    if (domain !== undefined && checked.key !== null) {
      const here = new URL(`${req.protocol}://${req.headers.host ?? ''}`);
      const own = archiveOrigin(here, domain, checked.key);
      if (here.origin !== own) return reply.code(302).header('cache-control', 'no-store').header('location', `${own}${req.url}`).send();
    }
    if (checked.source !== null) reply.header('clear-site-data', '"cookies", "storage"');
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(index);
  };
}

/** /sw.js: replay's service worker, registered with its own parameters only. */
export async function serviceWorker(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (!isRegistrationQuery(queryOf(req.url))) return reply.code(400).send({ error: 'replay registers its service worker with its own parameters only' });
  return reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('service-worker-allowed', '/').send(serviceWorkerScript());
}
