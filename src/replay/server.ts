// The replay side: ReplayWeb.page's static files (the `replaywebpage` npm package: index.html,
// ui.js, sw.js) and `/wacz/<key>` read from the bucket with Range support, so the viewer can
// fetch only the parts of a WACZ it needs. Opened as `/?source=/wacz/<objectKey>` by the picker.
//
// /wacz/<key> is NOT access-controlled: it is served from the bucket with the server's own
// credentials (as the bucket's anonymous read would be). The picker's list decides what is shown,
// not what could be fetched; closing that gap means signed URLs plus CORS on the bucket.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, NoSuchKey, NotFound, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';

/** The directory holding ReplayWeb.page's built files (index.html, ui.js, sw.js). */
export function replayWebPageDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('replaywebpage/index.html'));
}

const RANGE = /^bytes=(\d*)-(\d*)$/;

/** A single byte range against an object of `size` bytes; null when unsatisfiable; 'all' when absent/ignored. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'all' | null {
  if (header === undefined) return 'all';
  const m = RANGE.exec(header.trim());
  if (!m) return 'all'; // multiple or malformed ranges: serve the whole object (RFC 9110 allows ignoring Range)
  const [, a, b] = m;
  if (a === '' && b === '') return 'all';
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0) return null;
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (start >= size || end < start) return null;
  return { start, end };
}

function isMissing(err: unknown): boolean {
  return err instanceof NoSuchKey || err instanceof NotFound || (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404);
}

export async function buildReplayServer(opts: { s3: S3Client; bucket: string; logger?: FastifyServerOptions['logger']; staticDir?: string }): Promise<FastifyInstance> {
  const app = Fastify({ logger: opts.logger ?? false, routerOptions: { maxParamLength: 2048 } });
  const dir = opts.staticDir ?? replayWebPageDir();
  const index = await readFile(join(dir, 'index.html'), 'utf8');

  const sendIndex = async (_req: unknown, reply: import('fastify').FastifyReply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(index);
  app.get('/', sendIndex);
  await app.register(fastifyStatic, { root: dir, serve: true, index: false, wildcard: false, allowedPath: (path) => /^\/(ui\.js|sw\.js|adblock\/.*|ruffle\/.*)$/.test(path) });
  // The service worker's scope is the whole origin.
  app.addHook('onSend', async (request, reply) => {
    if (request.url.startsWith('/sw.js')) reply.header('service-worker-allowed', '/');
  });

  const object = async (key: string, range: string | undefined, method: 'GET' | 'HEAD', reply: import('fastify').FastifyReply) => {
    if (key === '' || key.split('/').some((s) => s === '..' || s === '.')) return reply.code(404).send({ error: 'not found' });
    let size: number;
    let contentType: string;
    try {
      const head = await opts.s3.send(new HeadObjectCommand({ Bucket: opts.bucket, Key: key }));
      size = head.ContentLength ?? 0;
      contentType = key.endsWith('.wacz') ? 'application/wacz' : (head.ContentType ?? 'application/octet-stream');
    } catch (err) {
      if (isMissing(err)) return reply.code(404).send({ error: 'not found' });
      throw err;
    }
    reply.header('accept-ranges', 'bytes').header('content-type', contentType).header('cache-control', 'no-cache');
    const r = parseRange(range, size);
    if (r === null) return reply.code(416).header('content-range', `bytes */${size}`).send();
    const partial = r !== 'all';
    const start = partial ? r.start : 0;
    const end = partial ? r.end : size - 1;
    const length = size === 0 ? 0 : end - start + 1;
    reply.code(partial ? 206 : 200).header('content-length', String(length));
    if (partial) reply.header('content-range', `bytes ${start}-${end}/${size}`);
    if (method === 'HEAD' || length === 0) return reply.send();
    const got = await opts.s3.send(new GetObjectCommand({ Bucket: opts.bucket, Key: key, Range: partial ? `bytes=${start}-${end}` : undefined }));
    return reply.send(got.Body instanceof Readable ? got.Body : Readable.from(Buffer.from(await got.Body!.transformToByteArray())));
  };
  app.route<{ Params: { '*': string } }>({
    method: ['GET', 'HEAD'],
    url: '/wacz/*',
    handler: async (req, reply) => object(req.params['*'], req.headers.range, req.method === 'HEAD' ? 'HEAD' : 'GET', reply),
  });
  return app;
}
