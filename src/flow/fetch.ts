// The guarded HTTP client every capture request goes through (src/flow/fetcher.ts), and redirect
// following on top of it. The address policy (src/domain/address-policy.ts) is applied twice
// before a byte leaves: to the URL's text, then to every address its name resolved to. The
// fetcher opens the TCP connection itself, to an address it checked (no second DNS lookup a
// rebinding name could answer differently), checks the socket's remote address once connected,
// and only then lets TLS and HTTP speak on it. Exchanges are kept as they went over the wire: the
// exact status line, headers and bytes of every hop, no content-encoding asked for, with the
// address connected to and, over https, the TLS session and the certificates the server sent.
import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type DetailedPeerCertificate, type TLSSocket } from 'node:tls';
import { checkAddress, checkUrl, type AddressPolicy, type RefusalCode } from '../domain/address-policy.ts';
import type { HeaderList, HttpExchange, TlsSession } from '../domain/wacz/warc.ts';
import type { Fetcher, FetchLimits, OutgoingRequest } from './fetcher.ts';

export class FetchError extends Error {
  override name = 'FetchError';
  readonly type: 'network' | 'redirects' | 'too-large' | 'aborted' | 'scheme' | 'refused';
  /** for 'refused': the address policy's code */
  readonly refusal: RefusalCode | undefined;
  constructor(type: FetchError['type'], message: string, refusal?: RefusalCode) {
    super(message);
    this.type = type;
    this.refusal = refusal;
  }
}

/** Every address a name resolves to (the test suite injects its own to stage DNS rebinding). */
export type Resolver = (hostname: string) => Promise<string[]>;

const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export interface GuardedFetcherOptions {
  resolve?: Resolver;
  /** default body limit, when the caller gives none (20 MiB) */
  maxBytes?: number;
  /** default overall limit on one exchange, connect to last byte (60 s) */
  timeoutMs?: number;
  /** the only certificate authorities https servers are checked against, instead of Node's (tests) */
  ca?: string[];
}

export const DEFAULT_MAX_BYTES = 20 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 60_000;

export function headerValue(headers: HeaderList, name: string): string | undefined {
  const n = name.toLowerCase();
  return headers.find(([k]) => k.toLowerCase() === n)?.[1];
}

export function headerValues(headers: HeaderList, name: string): string[] {
  const n = name.toLowerCase();
  return headers.filter(([k]) => k.toLowerCase() === n).map(([, v]) => v);
}

function refused(code: RefusalCode, message: string): FetchError {
  return new FetchError('refused', `address refused: ${message}`, code);
}

function wrap(err: unknown, signal: AbortSignal): FetchError {
  if (err instanceof FetchError) return err;
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof FetchError) return reason;
    return new FetchError('aborted', 'aborted');
  }
  return new FetchError('network', (err as Error).message);
}

function once(socket: Socket, event: string, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      socket.destroy();
      reject(wrap(undefined, signal));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once(event, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    socket.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(wrap(err, signal));
    });
  });
}

/** Connects to the first checked address that answers; nothing is written here. */
async function connectChecked(policy: AddressPolicy, addresses: string[], port: number, host: string, signal: AbortSignal): Promise<Socket> {
  let last: FetchError | undefined;
  for (const ip of addresses) {
    const socket = netConnect({ host: ip, port });
    try {
      await once(socket, 'connect', signal);
    } catch (err) {
      last = wrap(err, signal);
      if (last.type === 'aborted') throw last;
      continue;
    }
    const refusal = checkAddress(policy, { ip: socket.remoteAddress ?? '', port: socket.remotePort ?? 0, host });
    if (refusal !== undefined) {
      socket.destroy();
      throw refused(refusal.code, `connected to ${socket.remoteAddress}: ${refusal.message}`);
    }
    return socket;
  }
  throw last ?? new FetchError('network', `${host}: no address to connect to`);
}

/** The chain the server sent, its own certificate first (the last issuer is the one that issued itself). */
export function peerCertificates(leaf: DetailedPeerCertificate): Buffer[] {
  const chain: Buffer[] = [];
  const seen = new Set<string>();
  for (let c: DetailedPeerCertificate | undefined = leaf; c?.raw !== undefined && !seen.has(c.fingerprint256); c = c.issuerCertificate) {
    seen.add(c.fingerprint256);
    chain.push(c.raw);
  }
  return chain;
}

function tlsSession(tls: TLSSocket): TlsSession {
  return { protocol: tls.getProtocol() ?? '', cipher: tls.getCipher().standardName, certificates: peerCertificates(tls.getPeerCertificate(true)) };
}

/** The request's headers for Node (Host is set from the URL; repeated names kept, in order). */
function nodeHeaders(headers: HeaderList): OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of headers) {
    if (k.toLowerCase() === 'host') continue;
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

export function createGuardedFetcher(policy: AddressPolicy, opts: GuardedFetcherOptions = {}): Fetcher {
  const resolve = opts.resolve ?? systemResolver;
  return async (req: OutgoingRequest, limits: FetchLimits = {}): Promise<HttpExchange> => {
    const refusal = checkUrl(policy, req.url);
    if (refusal !== undefined) throw refused(refusal.code, refusal.message);
    const u = new URL(req.url);
    u.hash = '';
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    const timeoutMs = limits.timeoutMs ?? opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxBytes = limits.maxBytes ?? opts.maxBytes ?? DEFAULT_MAX_BYTES;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = limits.signal ? AbortSignal.any([limits.signal, timeout]) : timeout;
    const timedOut = (): FetchError => new FetchError('network', `no complete answer from ${u.host} within ${timeoutMs} ms`);
    if (signal.aborted) throw timeout.aborted ? timedOut() : new FetchError('aborted', 'aborted before the request');

    let addresses: string[];
    if (isIP(host) !== 0) addresses = [host];
    else {
      try {
        addresses = await resolve(host);
      } catch (err) {
        throw new FetchError('network', `${host}: ${(err as Error).message}`);
      }
    }
    const allowed = addresses.filter((ip) => checkAddress(policy, { ip, port, host }) === undefined);
    if (allowed.length === 0) {
      const first = addresses.map((ip) => checkAddress(policy, { ip, port, host })).find((r) => r !== undefined);
      throw first !== undefined ? refused(first.code, first.message) : new FetchError('network', `${host} resolved to no address`);
    }

    let socket: Socket;
    let session: TlsSession | undefined;
    let ip: string | undefined;
    try {
      socket = await connectChecked(policy, allowed, port, host, signal);
      // the address the policy checked, read before TLS wraps the socket
      ip = socket.remoteAddress;
      if (u.protocol === 'https:') {
        // host: what the certificate is checked against; servername: SNI (never an IP)
        const tls = tlsConnect({
          socket,
          host,
          servername: isIP(host) === 0 ? host : undefined,
          ALPNProtocols: ['http/1.1'],
          ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
        });
        await once(tls, 'secureConnect', signal);
        session = tlsSession(tls);
        socket = tls;
      }
    } catch (err) {
      const e = wrap(err, signal);
      throw timeout.aborted && e.type === 'aborted' ? timedOut() : e;
    }

    const target = u.pathname + u.search;
    const requestHeaders: HeaderList = [['Host', u.host], ...req.headers.filter(([k]) => k.toLowerCase() !== 'host')];
    const date = new Date();
    const connected = socket;
    return new Promise<HttpExchange>((resolveExchange, reject) => {
      let settled = false;
      const fail = (err: unknown): void => {
        if (settled) return;
        settled = true;
        const e = wrap(err, signal);
        reject(timeout.aborted && e.type === 'aborted' ? timedOut() : e);
        connected.destroy();
      };
      const r = httpRequest(
        { createConnection: () => connected, host, port, method: req.method, path: target, headers: nodeHeaders(req.headers), setHost: true, signal },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > maxBytes) fail(new FetchError('too-large', `body larger than ${maxBytes} bytes`));
            else chunks.push(c);
          });
          res.on('error', fail);
          res.on('end', () => {
            if (settled) return;
            settled = true;
            const raw = res.rawHeaders;
            const headers: HeaderList = [];
            for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!]);
            resolveExchange({
              url: u.href,
              date,
              ...(ip !== undefined ? { ip } : {}),
              ...(session !== undefined ? { tls: session } : {}),
              request: { method: req.method, target, httpVersion: '1.1', headers: requestHeaders },
              response: {
                status: res.statusCode ?? 0,
                statusText: res.statusMessage ?? '',
                httpVersion: res.httpVersion || '1.1',
                headers,
                body: Buffer.concat(chunks),
              },
            });
            connected.destroy();
          });
        },
      );
      r.on('error', fail);
      r.end(req.body);
    });
  };
}

export interface FollowOptions {
  userAgent: string;
  signal?: AbortSignal;
  /** per hop (default 20 MiB) */
  maxBytes?: number;
  /** per hop, connect to last byte (default 60 s) */
  timeoutMs?: number;
  accept?: string;
  maxRedirects?: number;
}

export interface FetchResult {
  /** every hop in order; the last is the final response */
  hops: HttpExchange[];
  finalUrl: string;
  final: HttpExchange;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** GETs url and follows redirects (each hop its own request, checked by the fetcher) up to a limit. */
export async function fetchFollowing(fetcher: Fetcher, url: string, opts: FollowOptions): Promise<FetchResult> {
  const hops: HttpExchange[] = [];
  const seen = new Set<string>();
  const start = new URL(url);
  start.hash = '';
  let current = start.href;
  const max = opts.maxRedirects ?? 10;
  const headers: HeaderList = [
    ['User-Agent', opts.userAgent],
    ['Accept', opts.accept ?? 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'],
    ['Accept-Encoding', 'identity'],
    ['Connection', 'close'],
  ];
  const limits: FetchLimits = {
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.maxBytes !== undefined ? { maxBytes: opts.maxBytes } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
  };
  for (;;) {
    if (seen.has(current)) throw new FetchError('redirects', `redirect loop at ${current}`);
    seen.add(current);
    const x = await fetcher({ url: current, method: 'GET', headers }, limits);
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
