// A lean reader for the small JSON objects admission reads by the thousand (manifests and links
// artifacts): one GET signed with SigV4 as the SDK's own signer signs it (src/s3/sign-get.ts:
// service s3, path not re-escaped, payload hash header; the same Authorization byte for byte),
// sent path-style (as src/s3/client.ts is configured) over a keep-alive agent. The SDK client's
// middleware stack costs ~2 ms of CPU per request, four times what the request itself does; at
// 2,000 reads per 1,000-page level that was most of admission's time. Everything else keeps
// using the SDK client.
import http from 'node:http';
import https from 'node:https';
import type { Config } from '../config/env.ts';
import { objectPath } from './object-path.ts';
import { createGetSigner, versionQuery } from './sign-get.ts';

/** 'too-large': the object is bigger than the read allows; reading it again will not help. */
export type ObjectRead = { kind: 'ok'; text: string } | { kind: 'missing' } | { kind: 'unreadable'; error: string } | { kind: 'too-large'; error: string };

export interface ObjectReader {
  /** maxBytes: refuse a larger object (default MAX_OBJECT_BYTES); versionId: that version of it */
  read(bucket: string, key: string, maxBytes?: number, versionId?: string): Promise<ObjectRead>;
  /** Ends its keep-alive connections; a read after it is 'unreadable' (never a new connection). */
  close(): void;
}

/** Manifests are a few KiB; a links artifact of 10,000 links is about 1 MiB. Nothing read here is
 * trusted to be small: a capturer wrote it. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
export const MAX_OBJECT_BYTES = 16 * 1024 * 1024;

export function createObjectReader(s3: Config['s3'], opts: { timeoutMs?: number; maxSockets?: number } = {}): ObjectReader {
  const endpoint = new URL(s3.endpoint);
  const secure = endpoint.protocol === 'https:';
  const transport = secure ? https : http;
  const port = endpoint.port ? Number(endpoint.port) : secure ? 443 : 80;
  const agent = new transport.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 64 });
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const sign = createGetSigner(s3);
  const basePath = endpoint.pathname;

  const get = (bucket: string, key: string, path: string, headers: Record<string, string>, maxBytes: number): Promise<ObjectRead> =>
    new Promise<ObjectRead>((resolve) => {
      let tooLarge = false;
      const req = transport.request(
        { protocol: endpoint.protocol, hostname: endpoint.hostname, port, path, method: 'GET', agent, headers, timeout: timeoutMs },
        (res) => {
          if (res.statusCode === 200 && Number(res.headers['content-length'] ?? 0) > maxBytes) {
            resolve({ kind: 'too-large', error: `S3 GET ${bucket}/${key}: object of ${res.headers['content-length']} bytes, larger than ${maxBytes}` });
            req.destroy();
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > maxBytes) {
              tooLarge = true;
              resolve({ kind: 'too-large', error: `S3 GET ${bucket}/${key}: object larger than ${maxBytes} bytes` });
              req.destroy();
            } else chunks.push(c);
          });
          res.on('end', () => {
            if (tooLarge) return;
            const body = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status === 200) resolve({ kind: 'ok', text: body });
            else if (status === 404) resolve({ kind: 'missing' });
            else resolve({ kind: 'unreadable', error: `S3 GET ${bucket}/${key} answered ${status}: ${body.slice(0, 200)}` });
          });
          res.on('error', (err) => resolve({ kind: 'unreadable', error: `S3 GET ${bucket}/${key}: ${err.message}` }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (err) => resolve({ kind: 'unreadable', error: `S3 GET ${bucket}/${key}: ${err.message}` }));
      req.end();
    });

  let closed = false;
  return {
    async read(bucket, key, maxBytes = MAX_OBJECT_BYTES, versionId) {
      if (closed) return { kind: 'unreadable', error: `S3 GET ${bucket}/${key}: the object reader is closed` };
      // exactly what was signed: the path as built (S3 is not re-escaped) and every header
      const path = objectPath(basePath, bucket, key);
      const headers = sign(endpoint.host, path, undefined, versionId);
      return get(bucket, key, versionId === undefined ? path : `${path}?${versionQuery(versionId)}`, headers, maxBytes);
    },
    close() {
      closed = true;
      agent.destroy();
    },
  };
}
