// `/wacz/<key>?<signature>`: a proxy to exactly one kind of object, a `.wacz` in the configured
// bucket, read with the caller's presigned GET. The host, port and bucket come from the
// configuration, only the key and the signature's parameters (X-Amz-*, and versionId, which is
// signed) from the request (checkSource); S3 checks the signature. An object is always served as
// application/wacz, never with its stored content type.
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { FastifyReply } from 'fastify';
import { objectPath } from '../s3/object-path.ts';
import { checkSource } from './source.ts';

export type ProxyMethod = 'GET' | 'HEAD';

/** The GET sent to S3: a presigned GET cannot answer HEAD (the method is signed), so HEAD asks for one byte. */
function upstreamHeaders(method: ProxyMethod, range: string | undefined): Record<string, string> {
  if (method === 'HEAD') return { range: 'bytes=0-0' };
  return range !== undefined ? { range } : {};
}

/** What S3 refused, answered as replay answers it; undefined when S3 sent the object (200 or 206). */
function refusal(upstream: Response, reply: FastifyReply): FastifyReply | undefined {
  if (upstream.status === 200 || upstream.status === 206) return undefined;
  void upstream.body?.cancel();
  if (upstream.status === 416)
    return reply
      .code(416)
      .header('content-range', upstream.headers.get('content-range') ?? '')
      .send();
  const refuse = (status: number, error: string) => reply.code(status).header('cache-control', 'no-store').send({ error });
  if (upstream.status === 403 || upstream.status === 400)
    return refuse(403, 'the bucket refused the signed source (expired, or not signed for this archive): open the archive from the picker again');
  if (upstream.status === 404) return refuse(404, 'not found');
  return refuse(502, `the bucket answered ${upstream.status}`);
}

/** HEAD: the object's size (from the one-byte range's Content-Range), no body. */
function sendSize(upstream: Response, reply: FastifyReply): FastifyReply {
  void upstream.body?.cancel();
  const total = /\/(\d+)$/.exec(upstream.headers.get('content-range') ?? '')?.[1] ?? upstream.headers.get('content-length') ?? '0';
  return reply.code(200).header('content-length', total).send();
}

/** GET: the object (or the range asked for), streamed. */
function sendBody(upstream: Response, reply: FastifyReply): FastifyReply {
  reply.code(upstream.status);
  const length = upstream.headers.get('content-length');
  if (length !== null) reply.header('content-length', length);
  const contentRange = upstream.headers.get('content-range');
  if (upstream.status === 206 && contentRange !== null) reply.header('content-range', contentRange);
  return reply.send(upstream.body === null ? '' : Readable.fromWeb(upstream.body as WebReadableStream));
}

export function createObjectProxy(opts: { endpoint: string; bucket: string }) {
  const endpoint = new URL(opts.endpoint);
  const basePath = endpoint.pathname;
  return async (rawUrl: string, range: string | undefined, method: ProxyMethod, reply: FastifyReply): Promise<FastifyReply> => {
    const q = rawUrl.indexOf('?');
    const checked = checkSource(rawUrl.slice('/wacz/'.length, q === -1 ? undefined : q), q === -1 ? '' : rawUrl.slice(q + 1));
    if (!checked.ok) return reply.code(checked.status).send({ error: checked.error });
    const target = `${endpoint.protocol}//${endpoint.host}${objectPath(basePath, opts.bucket, checked.key)}?${checked.query}`;
    let upstream: Response;
    try {
      upstream = await fetch(target, { method: 'GET', headers: upstreamHeaders(method, range), redirect: 'error' });
    } catch (err) {
      reply.log.warn({ err }, 'bucket unreachable');
      return reply.code(502).send({ error: 'the bucket could not be reached' });
    }
    const refused = refusal(upstream, reply);
    if (refused !== undefined) return refused;
    reply.header('accept-ranges', 'bytes').header('content-type', 'application/wacz').header('cache-control', 'no-store');
    return method === 'HEAD' ? sendSize(upstream, reply) : sendBody(upstream, reply);
  };
}
