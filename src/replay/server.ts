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
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { archiveLabelOf, archiveOrigin } from '../domain/replay-origin.ts';
import { useHostCheck } from '../http/host-check.ts';
import { objectPath } from '../s3/object-path.ts';
import { withAppForms } from './app-forms.ts';
import { DOCUMENT_POLICY, WORKER_POLICY } from './policy.ts';
import { isRegistrationQuery, serviceWorkerScript, WABAC_SW_PATH } from './service-worker.ts';
import { checkAppQuery, checkCollection, checkSource, COLLECTION_PREFIX } from './source.ts';

export { checkAppQuery, checkCollection, checkSource, type SourceCheck } from './source.ts';

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
  const endpoint = new URL(opts.endpoint);
  const basePath = endpoint.pathname;

  // The app's page: only with a source replay itself serves (checkAppQuery), and with an archive
  // domain only on that archive's own origin: anywhere else it is sent there (302). Opening an
  // archive also clears what replay stored on its origin before (IndexedDB, caches, the service
  // worker, cookies); on one shared origin that is what keeps one archive from reading another's.
  const sendIndex = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.url.indexOf('?');
    const checked = checkAppQuery(q === -1 ? '' : req.url.slice(q + 1));
    if (!checked.ok) return reply.code(checked.status).header('cache-control', 'no-store').send({ error: checked.error });
    if (domain !== undefined && checked.key !== null) {
      const here = new URL(`${req.protocol}://${req.headers.host ?? ''}`);
      const own = archiveOrigin(here, domain, checked.key);
      if (here.origin !== own) return reply.code(302).header('cache-control', 'no-store').header('location', `${own}${req.url}`).send();
    }
    if (checked.source !== null) reply.header('clear-site-data', '"cookies", "storage"');
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(index);
  };
  app.get('/', sendIndex);
  app.get('/sw.js', async (req, reply) => {
    const q = req.url.indexOf('?');
    if (!isRegistrationQuery(q === -1 ? '' : req.url.slice(q + 1)))
      return reply.code(400).send({ error: 'replay registers its service worker with its own parameters only' });
    return reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('service-worker-allowed', '/').send(serviceWorkerScript());
  });
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

  const object = async (rawUrl: string, range: string | undefined, method: 'GET' | 'HEAD', reply: FastifyReply) => {
    const q = rawUrl.indexOf('?');
    const checked = checkSource(rawUrl.slice('/wacz/'.length, q === -1 ? undefined : q), q === -1 ? '' : rawUrl.slice(q + 1));
    if (!checked.ok) return reply.code(checked.status).send({ error: checked.error });
    const target = `${endpoint.protocol}//${endpoint.host}${objectPath(basePath, opts.bucket, checked.key)}?${checked.query}`;
    // A presigned GET cannot answer HEAD (the method is signed): ask for one byte and read the size.
    let upstream: Response;
    try {
      upstream = await fetch(target, {
        method: 'GET',
        headers: method === 'HEAD' ? { range: 'bytes=0-0' } : range !== undefined ? { range } : {},
        redirect: 'error',
      });
    } catch (err) {
      reply.log.warn({ err }, 'bucket unreachable');
      return reply.code(502).send({ error: 'the bucket could not be reached' });
    }
    const refuse = (status: number, error: string) => {
      void upstream.body?.cancel();
      return reply.code(status).header('cache-control', 'no-store').send({ error });
    };
    if (upstream.status === 403 || upstream.status === 400)
      return refuse(403, 'the bucket refused the signed source (expired, or not signed for this archive): open the archive from the picker again');
    if (upstream.status === 404) return refuse(404, 'not found');
    if (upstream.status === 416) {
      void upstream.body?.cancel();
      return reply
        .code(416)
        .header('content-range', upstream.headers.get('content-range') ?? '')
        .send();
    }
    if (upstream.status !== 200 && upstream.status !== 206) return refuse(502, `the bucket answered ${upstream.status}`);
    reply.header('accept-ranges', 'bytes').header('content-type', 'application/wacz').header('cache-control', 'no-store');
    if (method === 'HEAD') {
      void upstream.body?.cancel();
      const total = /\/(\d+)$/.exec(upstream.headers.get('content-range') ?? '')?.[1] ?? upstream.headers.get('content-length') ?? '0';
      return reply.code(200).header('content-length', total).send();
    }
    reply.code(upstream.status);
    const length = upstream.headers.get('content-length');
    if (length !== null) reply.header('content-length', length);
    const contentRange = upstream.headers.get('content-range');
    if (upstream.status === 206 && contentRange !== null) reply.header('content-range', contentRange);
    return reply.send(upstream.body === null ? '' : Readable.fromWeb(upstream.body as WebReadableStream));
  };
  // An archive with those it requires (issue 26): ReplayWeb.page's multi-WACZ package, naming only
  // the /wacz/ sources of the path, each checked as the proxy checks it. Its loader reads the
  // package, then each WACZ through the proxy, and resolves a revisit from one in another.
  app.get(`${COLLECTION_PREFIX}*`, async (req, reply) => {
    const raw = req.raw.url ?? req.url;
    if (raw.includes('?')) return reply.code(400).send({ error: 'a collection takes no query: its sources are its path' });
    const checked = checkCollection(raw.slice(COLLECTION_PREFIX.length));
    if (!checked.ok) return reply.code(checked.status).header('cache-control', 'no-store').send({ error: checked.error });
    const resources = checked.sources.map((s) => ({ name: s.key, path: s.source }));
    return reply
      .type('application/json')
      .header('cache-control', 'no-store')
      .send(JSON.stringify({ profile: 'multi-wacz-package', resources }));
  });
  app.route({
    method: ['GET', 'HEAD'],
    url: '/wacz/*',
    handler: async (req, reply) => object(req.raw.url ?? req.url, req.headers.range, req.method === 'HEAD' ? 'HEAD' : 'GET', reply),
  });
  return app;
}
