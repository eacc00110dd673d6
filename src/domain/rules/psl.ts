// Registrable domains (sites) from the Public Suffix List in the tldts version the lockfile pins,
// private section included (foo.github.io and bar.github.io are different sites).
import { getDomain } from 'tldts';
// The suffix trie tldts itself looks names up in. Read only to answer one question tldts has no
// API for: "is there any list entry below this name?" — see hasSuffixRulesBelow.
import { edgeChild, edgeLength, edgeStart, exceptionsRoot, labelText, rulesRoot } from 'tldts/dist/cjs/src/data/trie.js';

const TLDTS_OPTIONS = {
  allowPrivateDomains: true,
  allowIcannDomains: true,
  // Inputs are host names the WHATWG URL parser already produced (lower-case, punycode), so no
  // extraction, and no validation: tldts refusing a name the URL parser accepts (say
  // `x..example.com`) would make that host a site of its own and break "same-site covers every
  // subdomain of a domain on a seed's site".
  extractHostname: false,
  validateHostname: false,
  // IP literals are recognised before tldts is asked (isIpLiteral).
  detectIp: false,
} as const;

const IPV4 = /^(?:0|[1-9][0-9]{0,2})\.(?:0|[1-9][0-9]{0,2})\.(?:0|[1-9][0-9]{0,2})\.(?:0|[1-9][0-9]{0,2})$/;

/** A host name as the URL parser serialises an IP address: dotted-quad IPv4 or [bracketed] IPv6. */
export function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith('[') || IPV4.test(hostname);
}

/**
 * The site of a (URL-parser-canonical) host name: its registrable domain, or the host name itself
 * when it has none — an IP address, localhost, or a name that is itself a public suffix.
 */
export function siteOf(hostname: string): string {
  let site = knownSites.get(hostname);
  if (site === undefined) {
    site = isIpLiteral(hostname) ? hostname : (getDomain(hostname, TLDTS_OPTIONS) ?? hostname);
    if (knownSites.size >= KNOWN_SITES_MAX) knownSites.clear();
    knownSites.set(hostname, site);
  }
  return site;
}

/** siteOf's answers by host name (a pure function of it): a level's links name few hosts, each many times. */
const knownSites = new Map<string, string>();
const KNOWN_SITES_MAX = 10_000;

/** The registrable domain, or null (IP address, localhost, a public suffix itself). */
export function registrableDomain(hostname: string): string | null {
  if (isIpLiteral(hostname)) return null;
  return getDomain(hostname, TLDTS_OPTIONS);
}

// Where each edge's label starts in labelText (edges are laid out in order).
const edgeOffset = new Uint32Array(edgeLength.length);
for (let edge = 0, offset = 0; edge < edgeLength.length; edge += 1) {
  edgeOffset[edge] = offset;
  offset += edgeLength[edge]!;
}

function edgeLabel(edge: number): string {
  const start = edgeOffset[edge]!;
  return labelText.slice(start, start + edgeLength[edge]!);
}

/** Trie nodes reached by walking `labels` (right to left) from `root`, through exact labels and '*'. */
function reach(root: number, labels: string[]): number[] {
  let nodes = [root];
  for (let i = labels.length - 1; i >= 0 && nodes.length > 0; i -= 1) {
    const label = labels[i]!;
    const next: number[] = [];
    for (const node of nodes) {
      for (let edge = edgeStart[node]!; edge < edgeStart[node + 1]!; edge += 1) {
        const l = edgeLabel(edge);
        if (l === label || (l === '*' && label !== '')) next.push(edgeChild[edge]!);
      }
    }
    nodes = next;
  }
  return nodes;
}

/**
 * True when some Public Suffix List entry (rule, wildcard or exception, either section) lies
 * strictly below `hostname` — so a subdomain of it may have a different registrable domain
 * (amazonaws.com: s3.amazonaws.com is a suffix of its own, so x.s3.amazonaws.com is its own site).
 * When false, every name under `hostname` has the same public suffix as `hostname` itself, hence
 * the same site. Conservative: wildcard edges are followed as well as exact ones.
 */
export function hasSuffixRulesBelow(hostname: string): boolean {
  const labels = hostname.split('.');
  for (const root of [rulesRoot, exceptionsRoot]) {
    for (const node of reach(root, labels)) {
      if (edgeStart[node + 1]! > edgeStart[node]!) return true;
    }
  }
  return false;
}
