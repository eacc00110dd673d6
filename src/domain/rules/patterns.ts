// The three kinds of pattern a rule may carry, and how each is read.
import { domainToUnicode } from 'node:url';
import { isIpLiteral } from './psl.ts';
import { keyOfUrl, type UrlKey } from './url-key.ts';

export type Scope = 'same-origin' | 'same-host' | 'same-site' | 'any';
export const SCOPES: readonly Scope[] = ['same-origin', 'same-host', 'same-site', 'any'];
export type PatternKind = 'scope' | 'domain' | 'prefix';

export type ParsedPattern =
  | { kind: 'scope'; scope: Scope; pattern: string }
  /** `pattern` as read; `ascii` what host names are compared with (punycode) */
  | { kind: 'domain'; pattern: string; ascii: string }
  /** `pattern` normalised (what is stored and compared); `key` the prefix's own URL */
  | { kind: 'prefix'; pattern: string; key: UrlKey }
  | { kind: 'invalid'; pattern: string; reason: string };

const URL_START = /^https?:\/\//i;
const ASCII_LABEL = /^[a-z0-9_-]+$/;

/**
 * A host name pattern: lower-case and spelled the way the URL parser spells it, so what is written
 * is what is compared. Accepted: ASCII names (labels of a-z 0-9 - _; punycode xn-- labels
 * included), a lower-case Unicode name exactly as its punycode reads back (bücher.de), a dotted-quad
 * IPv4 address, a bracketed IPv6 address in its canonical form ([::1]). Refused: upper case
 * (Example.com — the spec asks for a lower-case host name, and reading it as something else would
 * be a guess), ports, paths, userinfo, wildcards (*.example.com — a domain already covers its
 * subdomains), empty labels and trailing dots.
 */
function parseHostPattern(p: string): { ascii: string } | { reason: string } {
  const parsed = urlHostname(p);
  if ('reason' in parsed) return parsed;
  const { ascii } = parsed;
  if (isIpLiteral(ascii)) {
    return ascii === p ? { ascii } : { reason: `an IP address is written as ${ascii}` };
  }
  const bad = labelProblem(ascii.split('.'));
  if (bad !== undefined) return { reason: bad };
  if (ascii === p) return { ascii };
  if (p !== p.toLowerCase()) return { reason: 'host names must be lower-case' };
  // A Unicode spelling is taken only if it is exactly what its punycode reads back as.
  if (domainToUnicode(ascii) === p) return { ascii };
  return { reason: `not a host name as written; did you mean ${ascii}?` };
}

/** The host the URL parser reads from the pattern, when the pattern is nothing but a host. */
function urlHostname(p: string): { ascii: string } | { reason: string } {
  try {
    const u = new URL(`http://${p}/`);
    if (u.username !== '' || u.password !== '' || u.port !== '' || u.pathname !== '/' || u.search !== '' || u.hash !== '') {
      return { reason: 'a host name has no port, path, query, fragment or userinfo' };
    }
    return { ascii: u.hostname };
  } catch {
    return { reason: 'not a host name' };
  }
}

/** Why the labels of a parsed (ASCII) host name are not a host name's, if they are not. */
function labelProblem(labels: string[]): string | undefined {
  if (labels.includes('')) return 'a host name has no empty labels (leading, trailing or double dots)';
  if (labels.some((l) => !ASCII_LABEL.test(l))) return 'not a host name';
  // Node 24's URL parser lets an xn-- label through even when it is not valid punycode
  if (labels.some((l) => l.startsWith('xn--') && domainToUnicode(l) === l)) return 'not a host name';
  return undefined;
}

/**
 * An http(s) URL prefix, normalised: lower-case scheme and host, punycode, default port dropped,
 * path and query as the URL parser serialises them, a trailing host dot dropped, and at least the
 * "/" after the authority (https://example.com reads as https://example.com/, so it cannot match
 * https://example.com.evil.net/). A fragment or userinfo is refused: links have their fragment
 * dropped before any rule is tried, and userinfo is not compared.
 */
function parsePrefixPattern(p: string): { key: UrlKey } | { reason: string } {
  if (p.includes('#')) return { reason: 'a URL prefix cannot have a fragment: links are compared without theirs' };
  let u: URL;
  try {
    u = new URL(p);
  } catch {
    return { reason: 'not a URL' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { reason: 'only http and https URLs' };
  if (u.username !== '' || u.password !== '') return { reason: 'a URL prefix cannot carry userinfo' };
  return { key: keyOfUrl(u) };
}

function hasControlCharacter(s: string): boolean {
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

export function parsePattern(pattern: string): ParsedPattern {
  if ((SCOPES as readonly string[]).includes(pattern)) return { kind: 'scope', scope: pattern as Scope, pattern };
  if (pattern.length === 0) return { kind: 'invalid', pattern, reason: 'empty' };
  if ((SCOPES as readonly string[]).includes(pattern.toLowerCase())) {
    return { kind: 'invalid', pattern, reason: `scopes are written in lower case: ${pattern.toLowerCase()}` };
  }
  if (pattern.trim() !== pattern || hasControlCharacter(pattern)) {
    return { kind: 'invalid', pattern, reason: 'whitespace or control characters' };
  }
  if (URL_START.test(pattern)) {
    const r = parsePrefixPattern(pattern);
    return 'key' in r ? { kind: 'prefix', pattern: r.key.href, key: r.key } : { kind: 'invalid', pattern, reason: r.reason };
  }
  if (pattern.includes('://')) return { kind: 'invalid', pattern, reason: 'only http and https URLs' };
  const r = parseHostPattern(pattern);
  return 'ascii' in r ? { kind: 'domain', pattern, ascii: r.ascii } : { kind: 'invalid', pattern, reason: r.reason };
}

/** hostname is `domain` or a subdomain of it at a label boundary (not badads.example.com for ads.example.com). */
export function underDomain(hostname: string, domain: string): boolean {
  return hostname === domain || (hostname.length > domain.length && hostname.endsWith(domain) && hostname[hostname.length - domain.length - 1] === '.');
}
