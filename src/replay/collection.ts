// An archive with those it requires (issue 26): ReplayWeb.page's multi-WACZ package, naming only
// the /wacz/ sources of the path, each checked as the proxy checks it. Its loader reads the
// package, then each WACZ through the proxy, and resolves a revisit from one in another.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkCollection, COLLECTION_PREFIX } from './source.ts';

export async function collectionPackage(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const raw = req.raw.url ?? req.url;
  if (raw.includes('?')) return reply.code(400).send({ error: 'a collection takes no query: its sources are its path' });
  const checked = checkCollection(raw.slice(COLLECTION_PREFIX.length));
  if (!checked.ok) return reply.code(checked.status).header('cache-control', 'no-store').send({ error: checked.error });
  const resources = checked.sources.map((s) => ({ name: s.key, path: s.source }));
  return reply
    .type('application/json')
    .header('cache-control', 'no-store')
    .send(JSON.stringify({ profile: 'multi-wacz-package', resources }));
}
