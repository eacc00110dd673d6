// Link selection: from one level's follow pages, the next level's candidates. Pure logic, no I/O.
//
// Exactly what is taken:
//  1. Links are read only from follow pages. A page is judged by the URL it was asked for AND by
//     its finalUrl (where it landed after redirects): unless the rules decide `follow` for both,
//     the page yields no links and nothing is counted for it. So a link that redirected off-site
//     (or onto a capture/skip rule) cannot widen the crawl. A finalUrl that is not an http(s) URL
//     counts as not followed.
//  2. Relative hrefs resolve against the page's finalUrl (the document's own address), or its url
//     when there is no finalUrl.
//  3. rel="nofollow" is honoured: rel is a space-separated token list, compared ASCII
//     case-insensitively (rel="noopener NoFollow" is nofollow; rel="nofollowed" is not).
//  4. Only http(s) links are considered; hrefs that do not parse are dropped. Steps 3-4 happen
//     before any rule is tried, so such links are not counted in the decisions either.
//  5. The fragment is dropped, nothing else is normalised beyond the URL parser's own serialisation
//     (which every browser applies: lower-case scheme and host, punycode, default port dropped,
//     dot segments resolved, percent-encoding). Query order, trailing slashes, userinfo stay.
//  6. Each distinct URL is decided once per level; follow and capture become candidates in the
//     order first met (to be inserted ON CONFLICT DO NOTHING), and every decision is tallied per
//     rule and host name (port dropped).
//  7. A link the address policy refuses from its text (a local or private address, a port, a host
//     over 253 or a URL over 8 KiB) is not a candidate and is tallied as refused, not by the rules.
//     A page's links past maxLinksPerPage are not read; their number is tallied as refused too.
import { MAX_HOST_LENGTH, MAX_URL_LENGTH, type Refusal } from './address-policy.ts';
import { DecisionTallies, RefusalTallies, type DecisionTally, type LinkDecision, type RefusalTally } from './decisions.ts';
import { authorityOf, keyOn, plainLink, prefixOf, type Authority } from './link-resolution.ts';
import { compileRules, type Rule } from './rules/index.ts';
import { keyOfUrl, parseHttpUrl, type UrlKey } from './rules/url-key.ts';

export type { DecisionTally } from './decisions.ts';

export interface FollowPageLinks {
  url: string;
  finalUrl?: string;
  links: { href: string; rel?: string }[];
}

export interface SelectedLinks {
  /** distinct, in discovery order; host is the URL's host as a page row records it (port kept) */
  candidates: { url: string; host: string; action: 'follow' | 'capture' }[];
  decisions: DecisionTally[];
  /** distinct URLs the rules skipped (rule 0 included), in discovery order: pagesDiscovered counts them */
  skipped: string[];
  /** what the address policy or the per-page cap kept out */
  refused: RefusalTally[];
}

/** Links read per page; the rest are counted, not read (a page can carry hundreds of thousands). */
export const MAX_LINKS_PER_PAGE = 10_000;

export interface SelectOptions {
  /**
   * The address policy's verdict on a link's absolute URL (default: only the host and URL length
   * limits). It must judge a URL by its scheme, host name, port and length alone, as the address
   * policy does: a level asks it once an authority for the URLs within MAX_URL_LENGTH.
   */
  refuse?: (url: URL) => Refusal | undefined;
  maxLinksPerPage?: number;
}

function lengthLimits(url: URL): Refusal | undefined {
  if (url.href.length > MAX_URL_LENGTH) return { code: 'url-too-long', message: `URL longer than ${MAX_URL_LENGTH} characters` };
  if (url.hostname.length > MAX_HOST_LENGTH) return { code: 'host-too-long', message: `host name longer than ${MAX_HOST_LENGTH} characters` };
  return undefined;
}

/** rel is a token list split on ASCII whitespace; nofollow matched ASCII case-insensitively. */
export function isNofollow(rel: string | undefined): boolean {
  if (typeof rel !== 'string') return false;
  return rel.split(/[\t\n\f\r ]+/).some((t) => t.toLowerCase() === 'nofollow');
}

/** The absolute http(s) URL a link points at, fragment dropped; null when it is not one. */
export function resolveLink(href: string, base: string): string | null {
  return resolveLinkUrl(href, base)?.href ?? null;
}

/** resolveLink, parsed: the one parse a link gets (its policy check and rule key read this URL). */
export function resolveLinkUrl(href: string, base: string): URL | null {
  if (typeof href !== 'string') return null;
  let u: URL;
  try {
    u = new URL(href, base);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  // clearing re-serialises the URL; only a URL with a fragment (even an empty one) has a '#'
  if (u.href.includes('#')) u.hash = '';
  return u;
}

/**
 * What of its base an href's resolution reads, beyond the href itself: 'authority' for one that
 * starts with '/' (the base's scheme, userinfo, host and port: the parser drops tabs and newlines
 * and trims leading spaces, but a leading '/' stays first, so such an href is never path-relative),
 * 'nothing' for one that starts with http:// or https://, undefined when it may read the base's path
 * or query too. A level's selector uses it to resolve a site's navigation once, not on every page:
 * a real page repeats a hundred or more such links.
 */
export function hrefReads(href: string): 'authority' | 'nothing' | undefined {
  if (href.charCodeAt(0) === 0x2f) return 'authority';
  return ABSOLUTE_HTTP.test(href) ? 'nothing' : undefined;
}

const ABSOLUTE_HTTP = /^https?:\/\//i;

/** An http(s) base up to its path: scheme, userinfo, host and port as serialised; undefined when it
 * is not an http(s) URL (then no href resolves against it). */
export function baseAuthority(base: string): string | undefined {
  const u = parseHttpUrl(base);
  return u === null ? undefined : prefixOf(u);
}

/** Starts with '/' but not '//' or '/\\' (which are scheme-relative). */
function isPathAbsolute(href: string): boolean {
  if (href.charCodeAt(0) !== 0x2f) return false;
  const c1 = href.charCodeAt(1);
  return c1 !== 0x2f && c1 !== 0x5c;
}

/** An authority met this level: the policy's verdict on its URLs (within MAX_URL_LENGTH), what of
 * them is decided (by what follows the prefix), and the hrefs the parser resolved on its pages. */
interface KnownAuthority {
  authority: Authority;
  refusal: Refusal | undefined;
  decided: Set<string>;
  met: Set<string>;
}

/**
 * selectLinks, a page at a time: pages added in the level's order give exactly what selectLinks
 * gives for them, so admission can choose a page's links as soon as the pages before it are read.
 */
export class LinkSelector {
  private readonly refuse: (url: URL) => Refusal | undefined;
  private readonly cap: number;
  private readonly refused = new RefusalTallies();
  private readonly compiled: ReturnType<typeof compileRules>;
  /** URLs decided (or refused) this level, by their authority (its prefix, then what follows it) */
  private readonly decidedOn = new Map<string, Set<string>>();
  /** those whose authority's serialisation does not parse back (none known; kept exact all the same) */
  private readonly decidedElsewhere = new Set<string>();
  /** hrefs the parser resolved, met on an authority (by its prefix), and those that read nothing of
   * it: each one's URL is decided already, or it did not resolve to an http(s) URL */
  private readonly metAnywhere = new Set<string>();
  /** authorities met this level, by their text (a page's serialised one, or an absolute href's as written) */
  private readonly authorities = new Map<string, KnownAuthority | null>();
  private readonly candidates: SelectedLinks['candidates'] = [];
  private readonly skipped: string[] = [];
  private readonly tallies = new DecisionTallies();

  constructor(rules: Rule[], seeds: string[], opts: SelectOptions = {}) {
    this.refuse = opts.refuse ?? lengthLimits;
    this.cap = opts.maxLinksPerPage ?? MAX_LINKS_PER_PAGE;
    this.compiled = compileRules(rules, seeds);
  }

  private follows(url: string): boolean {
    return this.compiled.decide(url).action === 'follow';
  }

  add(page: FollowPageLinks): void {
    const landed = page.finalUrl ?? page.url;
    if (!this.follows(page.url) || !this.follows(landed)) return;
    const links = page.links ?? [];
    const cap = this.cap;
    if (links.length > cap) this.refused.add(page.url, new URL(page.url).hostname, 'too-many-links', links.length - cap);
    // the page's own authority (landed is an http(s) URL: it is followed)
    const here = this.pageAuthority(landed);
    for (const link of links.length > cap ? links.slice(0, cap) : links) {
      if (isNofollow(link.rel) || this.decidedPlain(link.href, here) || this.metBefore(link.href, here?.met)) continue;
      const u = resolveLinkUrl(link.href, landed);
      if (u !== null) this.decide(u);
    }
  }

  private pageAuthority(landed: string): KnownAuthority | undefined {
    const plain = plainLink(landed)?.authority;
    const k = plain === undefined ? undefined : this.known(plain);
    if (k !== undefined) return k;
    const u = parseHttpUrl(landed);
    return u === null ? undefined : this.known(prefixOf(u));
  }

  /** The authority `text` parses to, with its refusal, met once a level; undefined when it is none. */
  private known(text: string): KnownAuthority | undefined {
    let k = this.authorities.get(text);
    if (k === undefined) {
      const authority = authorityOf(text);
      // authorities written alike (HTTP://X.com, http://x.com:80) share their decided URLs
      const same = authority === undefined || authority.prefix === text ? undefined : this.known(authority.prefix);
      k =
        authority === undefined
          ? null
          : (same ?? { authority, refusal: this.refuse(authority.root), decided: this.decidedSetOf(authority.prefix), met: new Set() });
      this.authorities.set(text, k);
    }
    return k ?? undefined;
  }

  private decidedSetOf(prefix: string): Set<string> {
    let set = this.decidedOn.get(prefix);
    if (set === undefined) this.decidedOn.set(prefix, (set = new Set()));
    return set;
  }

  /** True when the href is a plain one (link-resolution.ts), now decided without a URL parse; false to leave it to the parser. */
  private decidedPlain(href: unknown, here: KnownAuthority | undefined): boolean {
    if (typeof href !== 'string') return false;
    // a site's navigation, met again: a path-absolute href that is what follows a decided URL's
    // prefix resolves to that URL (a serialised path and query re-resolve to themselves)
    if (here !== undefined && isPathAbsolute(href) && here.decided.has(href)) return true;
    const plain = plainLink(href);
    if (plain === undefined) return false;
    const k = plain.authority === undefined ? here : this.known(plain.authority);
    if (k === undefined) return false;
    const { pathAndQuery } = plain;
    if (k.decided.has(pathAndQuery)) return true;
    const a = k.authority;
    const url = a.prefix + pathAndQuery;
    // the policy's verdict on the authority holds for its URLs within the length limit
    if (url.length > MAX_URL_LENGTH) return false;
    k.decided.add(pathAndQuery);
    if (k.refusal !== undefined) this.refused.add(url, a.root.hostname, k.refusal.code);
    else this.record(url, a.root.host, keyOn(a, pathAndQuery));
    return true;
  }

  /** True when the href resolved before to the same URL (decided then, or not an http(s) URL);
   * otherwise it is noted as met, when what it resolves to depends only on the page's authority. */
  private metBefore(href: unknown, metHere: Set<string> | undefined): boolean {
    if (metHere === undefined || typeof href !== 'string') return false;
    const reads = hrefReads(href);
    const met = reads === 'authority' ? metHere : reads === 'nothing' ? this.metAnywhere : undefined;
    if (met === undefined) return false;
    if (met.has(href)) return true;
    met.add(href);
    return false;
  }

  /** A link's URL, decided once a level: refused, skipped, or a candidate. */
  private decide(u: URL): void {
    const url = u.href;
    if (!this.firstDecision(u, url)) return;
    const refusal = this.refuse(u);
    if (refusal !== undefined) {
      this.refused.add(url, u.hostname, refusal.code);
      return;
    }
    this.record(url, u.host, keyOfUrl(u));
  }

  /** True, noting the URL as decided, when it was not decided before this level. */
  private firstDecision(u: URL, url: string): boolean {
    const prefix = prefixOf(u);
    const k = this.known(prefix);
    const decided = k?.authority.prefix === prefix ? k.decided : this.decidedElsewhere;
    const key = decided === this.decidedElsewhere ? url : url.slice(prefix.length);
    if (decided.has(key)) return false;
    decided.add(key);
    return true;
  }

  /** A URL the policy let through, decided by the rules: a candidate or skipped, and tallied. */
  private record(url: string, host: string, key: UrlKey): void {
    const d = this.compiled.decideKey(key);
    const decision: LinkDecision = { url, hostname: key.hostname, rule: d.rule, action: d.action };
    this.tallies.add(decision);
    if (d.action !== 'skip') this.candidates.push({ url, host, action: d.action });
    else this.skipped.push(url);
  }

  /** The candidates so far, in discovery order: pages added later only append to them. */
  get candidatesSoFar(): readonly SelectedLinks['candidates'][number][] {
    return this.candidates;
  }

  result(): SelectedLinks {
    return { candidates: [...this.candidates], decisions: this.tallies.toArray(), skipped: [...this.skipped], refused: this.refused.toArray() };
  }
}

export function selectLinks(rules: Rule[], seeds: string[], pages: FollowPageLinks[], opts: SelectOptions = {}): SelectedLinks {
  const selector = new LinkSelector(rules, seeds, opts);
  for (const page of pages) selector.add(page);
  return selector.result();
}
