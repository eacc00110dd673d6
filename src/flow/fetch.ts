// Fetches a page the way an archiver needs it: the exact status line, headers and bytes of every
// hop (a redirect is its own request/response pair in the WARC), no content-encoding asked for,
// redirects followed by hand up to a limit, and an AbortSignal that tears the whole thing down.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { HeaderList, HttpExchange } from '../domain/wacz/warc.ts';

export class FetchError extends Error {
  override name = 'FetchError';
  constructor(
    readonly type: 'network' | 'redirects' | 'too-large' | 'aborted' | 'scheme',
    message: string,
  ) {
    super(message);
  }
}

export interface FetchOptions {
  userAgent: string;
  signal?: AbortSignal;
  /** refuse bodies larger than this (default 20 MiB) */
  maxBytes?: number;
  /** give up on a single hop after this long without an answer (default 60 s) */
  timeoutMs?: number;
  accept?: string;
}

export interface FetchResult {
  /** every hop in order; the last is the final response */
  hops: HttpExchange[];
  finalUrl: string;
  final: HttpExchange;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function headerValue(headers: HeaderList, name: string): string | undefined {
  const n = name.toLowerCase();
  return headers.find(([k]) => k.toLowerCase() === n)?.[1];
}

export function headerValues(headers: HeaderList, name: string): string[] {
  const n = name.toLowerCase();
  return headers.filter(([k]) => k.toLowerCase() === n).map(([, v]) => v);
}

/** One request, one response, nothing followed. */
export function fetchOnce(url: string, opts: FetchOptions): Promise<HttpExchange> {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return Promise.reject(new FetchError('scheme', `cannot fetch ${u.protocol} URLs`));
  const target = u.pathname + u.search;
  const reqHeaders: HeaderList = [
    ['Host', u.host],
    ['User-Agent', opts.userAgent],
    ['Accept', opts.accept ?? 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'],
    ['Accept-Encoding', 'identity'],
    ['Connection', 'close'],
  ];
  const maxBytes = opts.maxBytes ?? 20 * 1024 * 1024;
  const date = new Date();
  return new Promise<HttpExchange>((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new FetchError('aborted', 'aborted before the request'));
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      { protocol: u.protocol, hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || undefined, method: 'GET', path: target, headers: Object.fromEntries(reqHeaders.filter(([k]) => k !== 'Host').map(([k, v]) => [k, v])), setHost: true, agent: false, timeout: opts.timeoutMs ?? 60_000, signal: opts.signal },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) {
            req.destroy(new FetchError('too-large', `body larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('error', (err) => reject(wrap(err, opts.signal)));
        res.on('end', () => {
          const raw = res.rawHeaders;
          const headers: HeaderList = [];
          for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!]);
          resolve({
            url,
            date,
            ip: res.socket?.remoteAddress,
            request: { method: 'GET', target, httpVersion: '1.1', headers: reqHeaders },
            response: { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', httpVersion: res.httpVersion || '1.1', headers, body: Buffer.concat(chunks) },
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new FetchError('network', `no answer from ${u.host} within ${opts.timeoutMs ?? 60_000} ms`)));
    req.on('error', (err) => reject(wrap(err, opts.signal)));
    req.end();
  });
}

function wrap(err: Error, signal: AbortSignal | undefined): FetchError {
  if (err instanceof FetchError) return err;
  if (signal?.aborted || err.name === 'AbortError') return new FetchError('aborted', 'aborted');
  return new FetchError('network', err.message);
}

/** Follows redirects (each hop recorded) up to maxRedirects. */
export async function fetchFollowing(url: string, opts: FetchOptions & { maxRedirects?: number }): Promise<FetchResult> {
  const hops: HttpExchange[] = [];
  const seen = new Set<string>();
  const start = new URL(url);
  start.hash = '';
  let current = start.href;
  const max = opts.maxRedirects ?? 10;
  for (;;) {
    if (seen.has(current)) throw new FetchError('redirects', `redirect loop at ${current}`);
    seen.add(current);
    const x = await fetchOnce(current, opts);
    hops.push(x);
    const location = headerValue(x.response.headers, 'location');
    if (!REDIRECTS.has(x.response.status) || location === undefined) return { hops, finalUrl: current, final: x };
    if (hops.length > max) throw new FetchError('redirects', `more than ${max} redirects`);
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new FetchError('redirects', `bad Location ${JSON.stringify(location)}`);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new FetchError('scheme', `redirect to ${next.protocol} URL`);
    next.hash = '';
    current = next.href;
  }
}
