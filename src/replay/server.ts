// The replay side: ReplayWeb.page's static files (the `replaywebpage` npm package: index.html,
// ui.js, sw.js) and `/wacz/<key>?<signature>`, a proxy to exactly one kind of object: a `.wacz` in
// the configured bucket, read with a presigned GET the API handed out after can_view at
// HIGHER_CONSISTENCY (POST /api/archives/:id/url). The picker opens
// `/?source=<encoded /wacz/<key>?X-Amz-…>` in one click, or, for an archive that requires others
// (its revisit records refer to payloads stored there), `/?source=<encoded /collection/…>`.
//
// Knowing a key is not enough: the server holds no S3 credentials, signs nothing, and forwards
// the caller's signature to S3, which checks it (path, expiry). It is not an open proxy: the host,
// port and bucket come from the configuration, only the key and the X-Amz-* signature
// parameters from the request. Every answer carries X-Content-Type-Options: nosniff and replay's
// content policy (policy.ts), and an object is always served as application/wacz, never with its
// stored content type. The app's page opens only /wacz/ sources (source.ts), and /sw.js is
// ReplayWeb.page's worker with that policy on the pages it answers (service-worker.ts).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { archiveLabelOf } from '../domain/replay-origin.ts';
import { useHostCheck } from '../http/host-check.ts';
import { appPage, serviceWorker } from './app-page.ts';
import { withAppForms } from './app-forms.ts';
import { collectionPackage } from './collection.ts';
import { createObjectProxy } from './object-proxy.ts';
import { DOCUMENT_POLICY, WORKER_POLICY } from './policy.ts';
import { WABAC_SW_PATH } from './service-worker.ts';
import { COLLECTION_PREFIX } from './source.ts';

export { checkSource } from './source.ts';

/** The directory holding ReplayWeb.page's built files (index.html, ui.js, sw.js). */
export function replayWebPageDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('replaywebpage/index.html'));
}

export interface ReplayServerOptions {
  /** the S3 endpoint (CAPTURE_LEDGER_S3_ENDPOINT): the only host the server ever fetches from */
  endpoint: string;
  /** the only bucket it reads */
  bucket: string;
  logger?: FastifyServerOptions['logger'];
  staticDir?: string;
  /** the URLs replay is reached at (CAPTURE_LEDGER_REPLAY_URL): other Host names are 421 */
  publicUrls?: readonly string[];
  /**
   * CAPTURE_LEDGER_REPLAY_ARCHIVE_DOMAIN: each archive is replayed on an origin of its own under
   * this domain (src/domain/replay-origin.ts); a link to replay's own address is sent there
   */
  archiveDomain?: string;
}

export async function buildReplayServer(opts: ReplayServerOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: opts.logger ?? false, routerOptions: { maxParamLength: 2048 } });
  const domain = opts.archiveDomain;
  useHostCheck(app, { publicUrls: opts.publicUrls, ...(domain !== undefined ? { alsoAnswers: (host: string) => archiveLabelOf(host, domain) !== null } : {}) });
  const dir = opts.staticDir ?? replayWebPageDir();
  const index = withAppForms(await readFile(join(dir, 'index.html'), 'utf8'));
  const wabacWorker = await readFile(join(dir, 'sw.js'));

  app.get('/', appPage(index, domain));
  app.get('/sw.js', serviceWorker);
  app.get(WABAC_SW_PATH, async (_req, reply) => reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(wabacWorker));
  await app.register(fastifyStatic, {
    root: dir,
    serve: true,
    index: false,
    wildcard: true,
    allowedPath: (path) => /^\/(ui\.js|adblock\/.*|ruffle\/.*)$/.test(path),
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    // Every answer, JSON and scripts too: any of them could be opened as a page of this origin.
    reply.header('content-security-policy', request.url.startsWith('/sw.js') ? WORKER_POLICY : DOCUMENT_POLICY);
  });
  app.get(`${COLLECTION_PREFIX}*`, collectionPackage);
  const object = createObjectProxy({ endpoint: opts.endpoint, bucket: opts.bucket });
  app.route({
    method: ['GET', 'HEAD'],
    url: '/wacz/*',
    handler: async (req, reply) => object(req.raw.url ?? req.url, req.headers.range, req.method === 'HEAD' ? 'HEAD' : 'GET', reply),
  });
  return app;
}
