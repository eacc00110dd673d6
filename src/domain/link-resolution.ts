// Resolving a level's links without a URL parse each. Nearly every link a page carries is either
// path-absolute ('/a/b?c') or absolute on a plain host ('https://host/a'), and its path and query
// hold only characters the URL parser leaves as they are. Such a link's URL is its authority's
// serialisation (parsed once a level) followed by the href's path and query, fragment dropped:
// exactly what `new URL(href, base)` gives, as the property test in link-resolution.test.ts holds
// for arbitrary hrefs and bases. Everything else (`undefined` here) goes through the URL parser.
import { keyOfUrl, parseHttpUrl, urlKey, type UrlKey } from './rules/url-key.ts';

/** What every URL of one authority shares, parsed once: its serialisation, its root URL, its rule key. */
export interface Authority {
  /** scheme://[userinfo@]host[:port] as the URL parser serialises it */
  prefix: string;
  /** prefix + '/' */
  root: URL;
  /** the rule key of root; a URL of this authority has the same one but for href */
  key: UrlKey;
}

/** What an http(s) URL's serialisation holds before its path, scheme://[userinfo@]host[:port]: its
 * path always starts with '/', which neither its host nor its (escaped) userinfo holds. */
export function prefixOf(u: URL): string {
  return u.href.slice(0, u.href.indexOf('/', u.protocol.length + 2));
}

/** The authority `text` (scheme://…, nothing after) parses to, or undefined when it is not one. */
export function authorityOf(text: string): Authority | undefined {
  const root = parseHttpUrl(`${text}/`);
  if (root === null || root.pathname !== '/' || root.search !== '' || root.hash !== '') return undefined;
  return { prefix: root.href.slice(0, -1), root, key: keyOfUrl(root) };
}

/**
 * Characters the URL parser copies unchanged into a special URL's path and query: none it
 * percent-encodes, no backslash (a separator there), no tab or newline (it drops them), nothing
 * past ASCII; '%' stays as it is. A single quote is copied in a path but encoded in a query.
 */
const PLAIN_PATH_AND_QUERY = /^\/[\w\-.~!$&'()*+,;=:@/%]*(?:\?[\w\-.~!$&()*+,;=:@/?%]*)?$/;
/** A segment starting with '.' or '%2e' may be a dot segment, which the parser resolves. */
const MAYBE_DOT_SEGMENT = /\/(?:\.|%2e)/i;
/** An absolute http(s) href on a host of letters, digits, dots and hyphens, with a port or not. */
const PLAIN_ABSOLUTE = /^https?:\/\/[A-Za-z0-9.-]+(?::[0-9]*)?(?=[/?#]|$)/i;

/** The path and query of a path-absolute href, as they serialise, or undefined when the parser may change them. */
function plainPathAndQuery(pathAndQuery: string): string | undefined {
  return PLAIN_PATH_AND_QUERY.test(pathAndQuery) && !MAYBE_DOT_SEGMENT.test(pathAndQuery) ? pathAndQuery : undefined;
}

/** What follows an absolute href's authority, up to its fragment, as it serialises (an empty path is '/'). */
function afterAuthority(rest: string): string | undefined {
  if (rest === '') return '/';
  const c = rest.charCodeAt(0);
  if (c === 0x2f /* / */) return plainPathAndQuery(rest);
  if (c === 0x3f /* ? */) return plainPathAndQuery(`/${rest}`);
  return undefined;
}

/** A link resolved without a parse: its authority's text (to look the Authority up) and what follows it. */
export interface PlainLink {
  /** undefined: the page's own authority (a path-absolute href); else an absolute href's scheme://host[:port] as written */
  authority: string | undefined;
  /** path and query, fragment dropped, exactly as they serialise */
  pathAndQuery: string;
}

/**
 * An href the URL parser would resolve to its authority followed by `pathAndQuery`, or undefined
 * when it may do anything else (then it is left to the parser).
 */
export function plainLink(href: string): PlainLink | undefined {
  const hash = href.indexOf('#');
  const body = hash === -1 ? href : href.slice(0, hash);
  const c = body.charCodeAt(0);
  if (c === 0x2f /* / */) {
    const c1 = body.charCodeAt(1);
    // '//' and '/\' start a scheme-relative href
    if (c1 === 0x2f || c1 === 0x5c) return undefined;
    const pathAndQuery = plainPathAndQuery(body);
    return pathAndQuery === undefined ? undefined : { authority: undefined, pathAndQuery };
  }
  if (c !== 0x68 && c !== 0x48 /* h H */) return undefined;
  const m = PLAIN_ABSOLUTE.exec(body);
  if (m === null) return undefined;
  const pathAndQuery = afterAuthority(body.slice(m[0].length));
  return pathAndQuery === undefined ? undefined : { authority: m[0], pathAndQuery };
}

/** The rule key of a URL of `a` whose path and query are `pathAndQuery`. */
export function keyOn(a: Authority, pathAndQuery: string): UrlKey {
  return { ...a.key, href: a.key.origin + pathAndQuery };
}

const MAX_AUTHORITIES = 10_000;

/** urlKey's answers, the authorities of plain URLs parsed once (seeds and pages share a few hosts). */
export class UrlKeys {
  private readonly authorities = new Map<string, Authority | null>();

  /** The authority `text` (an absolute href's scheme://host[:port] as written) parses to, if any. */
  authority(text: string): Authority | undefined {
    let a = this.authorities.get(text);
    if (a === undefined) {
      // a level's pages name few authorities; a caller keying anything at all stays bounded
      if (this.authorities.size >= MAX_AUTHORITIES) this.authorities.clear();
      this.authorities.set(text, (a = authorityOf(text) ?? null));
    }
    return a ?? undefined;
  }

  keyOf(url: string): UrlKey | null {
    const plain = typeof url === 'string' ? plainLink(url) : undefined;
    const a = plain?.authority === undefined ? undefined : this.authority(plain.authority);
    return a === undefined ? urlKey(url) : keyOn(a, plain!.pathAndQuery);
  }
}
