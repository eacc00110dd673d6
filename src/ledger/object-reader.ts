// A lean reader for the small JSON objects admission reads by the thousand (manifests and links
// artifacts): one signed GET (AWS Signature Version 4, path-style, as src/s3/client.ts is
// configured) over a keep-alive agent. The SDK's middleware stack costs ~2 ms of CPU per
// request, four times what the request itself does; at 2,000 reads per 1,000-page level that
// was most of admission's time. Everything else keeps using the SDK client.
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Config } from '../config/env.ts';

export type ObjectRead = { kind: 'ok'; text: string } | { kind: 'missing' } | { kind: 'unreadable'; error: string };

export interface ObjectReader {
  read(bucket: string, key: string): Promise<ObjectRead>;
  close(): void;
}

const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');
const MAX_BODY = 64 * 1024 * 1024;

/** RFC 3986 encoding of one path segment, as SigV4 wants it for S3 (everything but unreserved). */
export function encodeSegment(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `/bucket/key` with every key segment encoded; the same string is sent and signed. */
export function objectPath(basePath: string, bucket: string, key: string): string {
  const base = basePath.replace(/\/+$/, '');
  return `${base}/${encodeSegment(bucket)}/${key.split('/').map(encodeSegment).join('/')}`;
}

const hmac = (k: Buffer | string, d: string): Buffer => createHmac('sha256', k).update(d, 'utf8').digest();

/** The Authorization header and x-amz-date of an unsigned-payload-free GET (empty body). */
export function signGet(opts: { host: string; path: string; region: string; accessKeyId: string; secretAccessKey: string; now: Date }): Record<string, string> {
  const amzDate = opts.now.toISOString().replace(/[:-]|\.\d{3}/g, '');
  const day = amzDate.slice(0, 8);
  const signedHeaders = 'host;x-amz-content-sha256;x-amz-date';
  const canonical = ['GET', opts.path, '', `host:${opts.host}`, `x-amz-content-sha256:${EMPTY_SHA256}`, `x-amz-date:${amzDate}`, '', signedHeaders, EMPTY_SHA256].join('\n');
  const scope = `${day}/${opts.region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical, 'utf8').digest('hex')].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${opts.secretAccessKey}`, day), opts.region), 's3'), 'aws4_request');
  const signature = createHmac('sha256', key).update(toSign, 'utf8').digest('hex');
  return {
    host: opts.host,
    'x-amz-date': amzDate,
    'x-amz-content-sha256': EMPTY_SHA256,
    authorization: `AWS4-HMAC-SHA256 Credential=${opts.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}

export function createObjectReader(s3: Config['s3'], opts: { timeoutMs?: number; maxSockets?: number } = {}): ObjectReader {
  const endpoint = new URL(s3.endpoint);
  const secure = endpoint.protocol === 'https:';
  const transport = secure ? https : http;
  const agent = new transport.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 64 });
  const timeoutMs = opts.timeoutMs ?? 30_000;
  return {
    read(bucket, key) {
      const path = objectPath(endpoint.pathname, bucket, key);
      const headers = signGet({ host: endpoint.host, path, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, now: new Date() });
      return new Promise<ObjectRead>((resolve) => {
        const req = transport.request({ protocol: endpoint.protocol, hostname: endpoint.hostname, port: endpoint.port || (secure ? 443 : 80), path, method: 'GET', agent, headers, timeout: timeoutMs }, (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_BODY) req.destroy(new Error(`object larger than ${MAX_BODY} bytes`));
            else chunks.push(c);
          });
          res.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status === 200) resolve({ kind: 'ok', text: body });
            else if (status === 404) resolve({ kind: 'missing' });
            else resolve({ kind: 'unreadable', error: `S3 GET ${bucket}/${key} answered ${status}: ${body.slice(0, 200)}` });
          });
          res.on('error', (err) => resolve({ kind: 'unreadable', error: `S3 GET ${bucket}/${key}: ${err.message}` }));
        });
        req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
        req.on('error', (err) => resolve({ kind: 'unreadable', error: `S3 GET ${bucket}/${key}: ${err.message}` }));
        req.end();
      });
    },
    close() {
      agent.destroy();
    },
  };
}
