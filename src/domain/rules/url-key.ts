// What the rules see of a URL. Only http(s) URLs have a key; everything else is never matched.
import { siteOf } from './psl.ts';

export interface UrlKey {
  /** 'http:' | 'https:' */
  protocol: string;
  /** lower-case, punycode, trailing dots dropped ('example.com.' is example.com) */
  hostname: string;
  /** '' for the scheme's default port */
  port: string;
  /** hostname plus ':port' when not the default */
  host: string;
  /** protocol + '//' + host */
  origin: string;
  /** registrable domain of hostname, or hostname itself (IP, localhost, public suffix) */
  site: string;
  /**
   * What URL prefixes are compared with: the WHATWG serialisation without userinfo and fragment,
   * with the key's host. Userinfo is dropped so https://x@www.example.com/search cannot slip past
   * a skip of https://www.example.com/search; trailing host dots for the same reason.
   */
  href: string;
}

export function stripTrailingDots(hostname: string): string {
  let end = hostname.length;
  while (end > 1 && hostname.charCodeAt(end - 1) === 46 /* . */) end -= 1;
  return end === hostname.length ? hostname : hostname.slice(0, end);
}

export function parseHttpUrl(input: string): URL | null {
  if (typeof input !== 'string') return null;
  let u: URL;
  try {
    u = new URL(input);
  } catch {
    return null;
  }
  return u.protocol === 'http:' || u.protocol === 'https:' ? u : null;
}

export function keyOfUrl(u: URL): UrlKey {
  const hostname = stripTrailingDots(u.hostname);
  const port = u.port;
  const host = port === '' ? hostname : `${hostname}:${port}`;
  const origin = `${u.protocol}//${host}`;
  // Everything after the authority: path, and query including a bare '?'. With no userinfo and no
  // fragment (a link's URL, nearly always) href is exactly protocol, '//', u.host and that; otherwise
  // a copy has them cleared first.
  let c = u;
  if (u.username !== '' || u.password !== '' || u.hash !== '') {
    c = new URL(u.href);
    c.username = '';
    c.password = '';
    c.hash = '';
  }
  const rest = c.href.slice(c.protocol.length + 2 + c.host.length);
  return { protocol: u.protocol, hostname, port, host, origin, site: siteOf(hostname), href: origin + rest };
}

/** The key of an http(s) URL string, or null for anything else (malformed, relative, other schemes). */
export function urlKey(input: string): UrlKey | null {
  const u = parseHttpUrl(input);
  return u === null ? null : keyOfUrl(u);
}

/** Host name without port, as crawl_decisions and robots group by; null when not an http(s) URL. */
export function hostnameOf(input: string): string | null {
  return urlKey(input)?.hostname ?? null;
}
