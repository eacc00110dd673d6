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
import type { ByteBudget } from '../domain/byte-budget.ts';
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
    const target = targetOf(policy, req.url, opts, limits);
    const allowed = await allowedAddresses(policy, resolve, target);
    const connected = await connectTarget(policy, allowed, target, opts.ca);
    return exchangeOver(connected, target, req);
  };
}

/** Where one request goes, and the limits it is sent within. */
interface Target {
  /** the URL without its fragment */
  u: URL;
  /** the URL's host name, an IPv6 address without its brackets */
  host: string;
  port: number;
  timeoutMs: number;
  maxBytes: number;
  budget: ByteBudget | undefined;
  /** fires at timeoutMs */
  timeout: AbortSignal;
  /** the timeout or the caller's signal */
  signal: AbortSignal;
}

/** The URL checked against the policy, and the limits; throws when it is refused or already aborted. */
function targetOf(policy: AddressPolicy, url: string, opts: GuardedFetcherOptions, limits: FetchLimits): Target {
  const refusal = checkUrl(policy, url);
  if (refusal !== undefined) throw refused(refusal.code, refusal.message);
  const u = new URL(url);
  u.hash = '';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  const timeoutMs = limits.timeoutMs ?? opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = limits.maxBytes ?? opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = limits.signal ? AbortSignal.any([limits.signal, timeout]) : timeout;
  const target: Target = { u, host, port, timeoutMs, maxBytes, budget: limits.budget, timeout, signal };
  if (signal.aborted) throw timeout.aborted ? timedOut(target) : new FetchError('aborted', 'aborted before the request');
  return target;
}

function timedOut(t: Target): FetchError {
  return new FetchError('network', `no complete answer from ${t.u.host} within ${t.timeoutMs} ms`);
}

/** What went wrong, as a FetchError: the exchange's own timeout is a network failure, not an abort. */
function failure(t: Target, err: unknown): FetchError {
  const e = wrap(err, t.signal);
  return t.timeout.aborted && e.type === 'aborted' ? timedOut(t) : e;
}

/** `p`, or the signal's abort, whichever comes first: a lookup that hangs (a name server that
 * never answers, a page naming slow hosts) holds the fetch no longer than its timeout. */
function withinSignal<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The addresses the host resolved to that the policy allows; throws the first refusal when it allows none. */
async function allowedAddresses(policy: AddressPolicy, resolve: Resolver, target: Target): Promise<string[]> {
  const { host, port } = target;
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = await withinSignal(resolve(host), target.signal);
    } catch (err) {
      if (target.signal.aborted) throw failure(target, err);
      throw new FetchError('network', `${host}: ${(err as Error).message}`);
    }
  }
  const allowed = addresses.filter((ip) => checkAddress(policy, { ip, port, host }) === undefined);
  if (allowed.length === 0) {
    const first = addresses.map((ip) => checkAddress(policy, { ip, port, host })).find((r) => r !== undefined);
    throw first !== undefined ? refused(first.code, first.message) : new FetchError('network', `${host} resolved to no address`);
  }
  return allowed;
}

interface Connected {
  /** the TLS socket over https */
  socket: Socket;
  /** the address the policy checked */
  ip: string | undefined;
  session: TlsSession | undefined;
}

/** A socket to a checked address, TLS on it over https. */
async function connectTarget(policy: AddressPolicy, allowed: string[], t: Target, ca: string[] | undefined): Promise<Connected> {
  try {
    const socket = await connectChecked(policy, allowed, t.port, t.host, t.signal);
    // the address the policy checked, read before TLS wraps the socket
    const ip = socket.remoteAddress;
    if (t.u.protocol !== 'https:') return { socket, ip, session: undefined };
    // host: what the certificate is checked against; servername: SNI (never an IP)
    const tls = tlsConnect({
      socket,
      host: t.host,
      servername: isIP(t.host) === 0 ? t.host : undefined,
      ALPNProtocols: ['http/1.1'],
      ...(ca !== undefined ? { ca } : {}),
    });
    await once(tls, 'secureConnect', t.signal);
    return { socket: tls, ip, session: tlsSession(tls) };
  } catch (err) {
    throw failure(t, err);
  }
}

/** Sends the request on the connected socket and reads the whole answer, as it went over the wire. */
function exchangeOver(connected: Connected, t: Target, req: OutgoingRequest): Promise<HttpExchange> {
  const { socket, ip, session } = connected;
  const path = t.u.pathname + t.u.search;
  const requestHeaders: HeaderList = [['Host', t.u.host], ...req.headers.filter(([k]) => k.toLowerCase() !== 'host')];
  const date = new Date();
  return new Promise<HttpExchange>((resolveExchange, reject) => {
    let settled = false;
    /** bytes of this body taken from the shared budget: given back if the exchange fails */
    let held = 0;
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      t.budget?.give(held);
      held = 0;
      reject(failure(t, err));
      socket.destroy();
    };
    const take = (n: number): FetchError | undefined => {
      if (settled) return new FetchError('aborted', 'the exchange is over');
      if (t.budget === undefined) return undefined;
      if (!t.budget.take(n)) return new FetchError('too-large', `${t.u.href}: the page's responses would hold more than its budget of ${t.budget.limit} bytes`);
      held += n;
      return undefined;
    };
    const answered = (res: IncomingMessage, body: Buffer): void => {
      if (settled) return;
      settled = true;
      resolveExchange({
        url: t.u.href,
        date,
        ...(ip !== undefined ? { ip } : {}),
        ...(session !== undefined ? { tls: session } : {}),
        request: { method: req.method, target: path, httpVersion: '1.1', headers: requestHeaders },
        response: responseOf(res, body),
      });
      socket.destroy();
    };
    const r = httpRequest(
      {
        createConnection: () => socket,
        host: t.host,
        port: t.port,
        method: req.method,
        path,
        headers: nodeHeaders(req.headers),
        setHost: true,
        signal: t.signal,
      },
      (res: IncomingMessage) => readBody(res, t.maxBytes, take, fail, (body) => answered(res, body)),
    );
    r.on('error', fail);
    r.end(req.body);
  });
}

/** The body, up to maxBytes and what `take` grants it chunk by chunk: one byte more fails the exchange. */
function readBody(
  res: IncomingMessage,
  maxBytes: number,
  take: (n: number) => FetchError | undefined,
  fail: (err: unknown) => void,
  done: (body: Buffer) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  res.on('data', (c: Buffer) => {
    if (refused) return;
    size += c.length;
    const over = size > maxBytes ? new FetchError('too-large', `body larger than ${maxBytes} bytes`) : take(c.length);
    if (over === undefined) return void chunks.push(c);
    refused = true;
    chunks.length = 0;
    fail(over);
  });
  res.on('error', fail);
  res.on('end', () => done(Buffer.concat(chunks)));
}

/** The response as received: status line and raw headers (repeats and order kept). */
function responseOf(res: IncomingMessage, body: Buffer): HttpExchange['response'] {
  const raw = res.rawHeaders;
  const headers: HeaderList = [];
  for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!]);
  return { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', httpVersion: res.httpVersion || '1.1', headers, body };
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
