// Which Host headers a server answers, against DNS rebinding: a page in a developer's browser can
// point a name of its own at 127.0.0.1, and its requests then reach a loopback service carrying
// that name in Host. A server answers only the names it is configured for: its bind address and
// its public URLs, with their ports, and localhost, 127.0.0.1 and [::1] when it listens on
// loopback (or on every interface, which includes loopback). Anything else is 421, before any
// work. Comparison is exact after lowercasing; the port is part of the name.

/** `hostname:port`, lowercase, an IPv6 address in brackets: how allowed names are kept. */
export type HostKey = string;

export const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'] as const;

const WILDCARD_BINDS = new Set(['0.0.0.0', '::', '[::]', '']);
const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };
// a registered name or IPv4 address, or an IPv6 literal in brackets, then an optional port
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?\.?)(?::(\d{1,5}))?$/;
const MAX_HOST_HEADER = 300;

export type HostDecision = { ok: true; hostname: string } | { ok: false; status: 400 | 421; error: string };

const portOf = (key: HostKey): string => key.slice(key.lastIndexOf(':') + 1);

function bracketed(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** A bind address (`127.0.0.1`, `::1`, `localhost`, `0.0.0.0`) as a Host name, or undefined for a wildcard. */
function bindName(host: string): string | undefined {
  const h = host.trim().toLowerCase();
  return WILDCARD_BINDS.has(h) ? undefined : bracketed(h);
}

/** Loopback as a bind address or Host name: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackName(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 'localhost' || h === '[::1]' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The name and port of an http(s) URL; undefined when it is not one. */
function urlKey(url: string): HostKey | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const port = parsed.port === '' ? DEFAULT_PORTS[parsed.protocol] : Number(parsed.port);
  return port === undefined || parsed.hostname === '' ? undefined : `${parsed.hostname}:${port}`;
}

/** The names a server bound to `bind` (undefined: not listening on a port) and reached at `publicUrls` answers for. */
export function allowedHosts(bind: { host: string; port: number } | undefined, publicUrls: readonly string[] = []): Set<HostKey> {
  const allowed = new Set<HostKey>();
  if (bind !== undefined) {
    const own = bindName(bind.host);
    if (own !== undefined) allowed.add(`${own}:${bind.port}`);
    if (own === undefined || isLoopbackName(own)) for (const name of LOOPBACK_NAMES) allowed.add(`${name}:${bind.port}`);
  }
  for (const url of publicUrls) {
    const key = urlKey(url);
    if (key !== undefined) allowed.add(key);
  }
  return allowed;
}

/**
 * The decision for one request's Host header: a missing, repeated or malformed one is 400, a
 * name (or port) the server is not configured for is 421. A Host without a port is the default
 * port of the scheme the client used, which a server behind a proxy cannot see: 80 or 443.
 * `alsoAnswers` takes names beyond the allowed ones, on the ports those are on.
 */
export function checkHost(header: string | string[] | undefined, allowed: ReadonlySet<HostKey>, alsoAnswers?: (hostname: string) => boolean): HostDecision {
  if (header === undefined || header === '') return { ok: false, status: 400, error: 'a Host header is required' };
  if (Array.isArray(header)) return { ok: false, status: 400, error: 'one Host header only' };
  const value = header.toLowerCase();
  const m = value.length <= MAX_HOST_HEADER ? HOST_HEADER.exec(value) : null;
  if (m === null) return { ok: false, status: 400, error: 'the Host header is not host[:port]' };
  const hostname = m[1]!;
  const candidates = m[2] === undefined ? [`${hostname}:80`, `${hostname}:443`] : [`${hostname}:${Number(m[2])}`];
  if (candidates.some((key) => allowed.has(key))) return { ok: true, hostname };
  // a name answered by pattern (replay's archive origins), on a port the server answers on
  if (alsoAnswers?.(hostname) === true) {
    const ports = new Set([...allowed].map(portOf));
    if (candidates.some((key) => ports.has(portOf(key)))) return { ok: true, hostname };
  }
  return { ok: false, status: 421, error: `misdirected request: this server does not answer for the host ${JSON.stringify(header.slice(0, 100))}` };
}
