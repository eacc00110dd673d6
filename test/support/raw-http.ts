// One HTTP request with exactly the headers given, Host included (fetch sets Host itself from the
// URL): what a browser sends after DNS rebinding, or a client sends with a broken request.
import { request } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RawRequest {
  method?: string;
  /** path and query, sent as written */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** Sends `req` to `base` (http://127.0.0.1:port) and reads the whole answer. */
export function rawRequest(base: string, req: RawRequest): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const r = request(
      { hostname, port, method: req.method ?? 'GET', path: req.path, headers: req.headers, setHost: req.headers?.host === undefined },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}
