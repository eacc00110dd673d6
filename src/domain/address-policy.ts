// Where a capture may connect. Pure: no DNS, no sockets. Two questions are asked of it: is this URL
// fetchable at all (syntax only — what the API can check for a seed), and may we talk to this
// address (what the fetcher asks about the address it resolved and is about to connect to, so a
// name that resolves to 127.0.0.1 is caught however it got there). Loopback, private, link-local
// (cloud metadata), CGNAT, unique-local, multicast, unspecified, broadcast and reserved ranges are
// refused, in every IPv4-mapped or -embedded IPv6 spelling; only http(s) on 80/443 passes unless
// the allowlist says otherwise. The allowlist is how development and tests reach their own sites.
// No entry, of any form, opens the stack itself: its ports are refused on every address, and the
// address it binds (127.0.0.1, where `temporal server start-dev` also opens an HTTP API, metrics
// and internal gRPC ports at random) on every port. A host:port entry opens the addresses its
// name resolves to, but never a metadata or link-local one unless that address is listed itself.
import ipaddr from 'ipaddr.js';

type Ip = ipaddr.IPv4 | ipaddr.IPv6;

export const MAX_HOST_LENGTH = 253;
export const MAX_URL_LENGTH = 8192;
const DEFAULT_PORTS = new Set([80, 443]);

/** What an IP address is, as far as the policy cares. Everything but 'public' is refused. */
export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'cgnat' | 'unique-local' | 'multicast' | 'unspecified' | 'broadcast' | 'reserved';

export type RefusalCode = 'bad-url' | 'scheme' | 'url-too-long' | 'host-too-long' | 'local-name' | 'address' | 'port' | 'stack-port' | 'stack-address';

export interface Refusal {
  code: RefusalCode;
  /** names the URL or the address */
  message: string;
}

export type AllowEntry = { kind: 'cidr'; text: string; range: [Ip, number] } | { kind: 'host-port'; text: string; host: string; port: number };

export interface AddressPolicy {
  allow: readonly AllowEntry[];
  /** never allowed through any entry: the stack's own ports */
  deniedPorts: ReadonlySet<number>;
}

/**
 * Where the stack listens (scripts/lib/services.mjs binds every service to 127.0.0.1), refused on
 * every port whatever the allowlist says; 0.0.0.0 and :: connect to this machine too.
 */
export const STACK_ADDRESSES: readonly string[] = ['127.0.0.1', '::1', '0.0.0.0', '::'];

/** Cloud metadata services a name's entry never opens (link-local ones are refused as a class). */
export const METADATA_ADDRESSES: readonly string[] = ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200'];

/** Classes a host:port entry never opens through its name: only an entry of the address itself does. */
const NEVER_BY_NAME: ReadonlySet<AddressClass> = new Set(['link-local', 'unspecified', 'multicast', 'broadcast']);

export class AllowlistError extends Error {
  override name = 'AllowlistError';
  readonly entry: string;
  constructor(entry: string, reason: string) {
    super(`allowlist entry ${JSON.stringify(entry)}: ${reason}`);
    this.entry = entry;
  }
}

export function createAddressPolicy(allow: readonly AllowEntry[] = [], deniedPorts: Iterable<number> = []): AddressPolicy {
  return { allow, deniedPorts: new Set(deniedPorts) };
}

/** Only the plain spellings: four dotted decimals, or IPv6. `0x7f.1` in an allowlist is a typo. */
function strictIp(text: string): Ip | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return undefined;
}

function parsePort(text: string, entry: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) throw new AllowlistError(entry, `port ${JSON.stringify(text)} is not 1-65535`);
  return Number(text);
}

/** One entry: `10.0.0.0/8`, `fd00::/8`, `127.0.0.2` (a /32), `site.test:8080`, `[::1]:8080`. */
export function parseAllowEntry(raw: string): AllowEntry {
  const text = raw.trim();
  if (text === '') throw new AllowlistError(raw, 'is empty');
  if (text.includes('://')) throw new AllowlistError(text, 'expected a CIDR (10.0.0.0/8), an IP, or host:port, not a URL');
  const slash = text.indexOf('/');
  if (slash >= 0) return parseCidrEntry(text, slash);
  const bare = strictIp(text);
  if (bare !== undefined) return { kind: 'cidr', text, range: [bare, bare.kind() === 'ipv4' ? 32 : 128] };
  const bracketed = /^\[([0-9a-fA-F:.]+)\]:(\d+)$/.exec(text);
  if (bracketed) return parseBracketedEntry(text, bracketed[1]!, bracketed[2]!);
  return parseHostPortEntry(text);
}

/** `10.0.0.0/8`, `fd00::/8`: the address before the slash, the prefix length after it. */
function parseCidrEntry(text: string, slash: number): AllowEntry {
  const ip = strictIp(text.slice(0, slash));
  const bits = text.slice(slash + 1);
  if (ip === undefined) throw new AllowlistError(text, `${JSON.stringify(text.slice(0, slash))} is not an IP address`);
  const max = ip.kind() === 'ipv4' ? 32 : 128;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) throw new AllowlistError(text, `prefix length must be 0-${max}`);
  return { kind: 'cidr', text, range: [ip, Number(bits)] };
}

/** `[::1]:8080`: only an IPv6 address goes in brackets. */
function parseBracketedEntry(text: string, address: string, port: string): AllowEntry {
  const ip = strictIp(address);
  if (ip === undefined || ip.kind() !== 'ipv6') throw new AllowlistError(text, `${address} is not an IPv6 address`);
  return { kind: 'host-port', text, host: ip.toNormalizedString(), port: parsePort(port, text) };
}

/** `site.test:8080`, `127.0.0.2:8080`: the host as the URL parser spells it. */
function parseHostPortEntry(text: string): AllowEntry {
  const m = /^([^\s:/[\]]+):([^:]*)$/.exec(text);
  if (!m) throw new AllowlistError(text, 'expected a CIDR (10.0.0.0/8), an IP, or host:port');
  const port = parsePort(m[2]!, text);
  const ip = strictIp(m[1]!);
  if (ip !== undefined) return { kind: 'host-port', text, host: ip.toNormalizedString(), port };
  let host: string;
  try {
    host = new URL(`http://${m[1]}/`).hostname;
  } catch {
    throw new AllowlistError(text, `${JSON.stringify(m[1])} is not a host name`);
  }
  if (host.length > MAX_HOST_LENGTH) throw new AllowlistError(text, `host longer than ${MAX_HOST_LENGTH} characters`);
  return { kind: 'host-port', text, host, port };
}

/** A comma-separated list; empty means nothing beyond the public web. */
export function parseAllowlist(raw: string): AllowEntry[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(parseAllowEntry);
}

/** An IPv4 address hidden in an IPv6 one (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d). */
function embeddedIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = ip.parts;
  const zero = (from: number, to: number): boolean => p.slice(from, to).every((x) => x === 0);
  const v4 = (): ipaddr.IPv4 => new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
  if (zero(0, 5) && p[5] === 0xffff) return v4();
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return v4();
  if (zero(0, 6) && !(p[6] === 0 && p[7]! <= 1)) return v4();
  return undefined;
}

function classifyV4(ip: ipaddr.IPv4): AddressClass {
  switch (ip.range()) {
    case 'unicast':
      return 'public';
    case 'loopback':
      return 'loopback';
    case 'private':
      return 'private';
    case 'linkLocal':
      return 'link-local';
    case 'carrierGradeNat':
      return 'cgnat';
    case 'multicast':
      return 'multicast';
    case 'unspecified':
      return 'unspecified';
    case 'broadcast':
      return 'broadcast';
    default:
      return 'reserved';
  }
}

function classifyParsed(ip: Ip): AddressClass {
  if (ip.kind() === 'ipv4') return classifyV4(ip as ipaddr.IPv4);
  const v6 = ip as ipaddr.IPv6;
  const v4 = embeddedIpv4(v6);
  if (v4 !== undefined) {
    const inner = classifyV4(v4);
    // a compatible or SIIT spelling of a public address is still not an address the web uses
    return inner === 'public' && v6.range() !== 'ipv4Mapped' ? 'reserved' : inner;
  }
  switch (v6.range() as string) {
    case 'unicast':
      return 'public';
    case 'loopback':
      return 'loopback';
    case 'linkLocal':
      return 'link-local';
    case 'uniqueLocal':
      return 'unique-local';
    case 'deprecatedSiteLocal':
      return 'private';
    case 'multicast':
      return 'multicast';
    case 'unspecified':
      return 'unspecified';
    default:
      // NAT64, 6to4, Teredo, documentation, benchmarking ...: refused (several embed an IPv4 address)
      return 'reserved';
  }
}

/** Parses an IP as a socket or a URL's host gives it (brackets and a zone id allowed). */
export function parseIp(text: string): Ip | undefined {
  const bare = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  // most hosts are names: only what looks like an address is handed to ipaddr (which throws inside)
  if (/^[0-9.]+$/.test(bare)) return ipaddr.IPv4.isValidFourPartDecimal(bare) ? ipaddr.IPv4.parse(bare) : undefined;
  if (bare.includes(':') && ipaddr.IPv6.isValid(bare)) return ipaddr.IPv6.parse(bare);
  return undefined;
}

export function classifyIp(text: string): AddressClass | undefined {
  const ip = parseIp(text);
  return ip === undefined ? undefined : classifyParsed(ip);
}

/** The IPv4 address an IPv4-mapped IPv6 one stands for; anything else as it is. */
function canonical(ip: Ip): Ip {
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  }
  return ip;
}

function inCidr(ip: Ip, range: [Ip, number]): boolean {
  const a = canonical(ip);
  const r = canonical(range[0]);
  if (a.kind() !== r.kind()) return false;
  // a mapped range (::ffff:127.0.0.0/104) covers the IPv4 addresses its last 32 bits name
  const bits = range[0].kind() === 'ipv6' && r.kind() === 'ipv4' ? Math.max(0, range[1] - 96) : range[1];
  return a.kind() === 'ipv4' ? (a as ipaddr.IPv4).match(r as ipaddr.IPv4, bits) : (a as ipaddr.IPv6).match(r as ipaddr.IPv6, bits);
}

function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || h === 'localhost.localdomain';
}

function effectivePort(u: URL): number {
  return u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
}

function hostPortAllowed(policy: AddressPolicy, host: string, port: number): boolean {
  const ip = parseIp(host);
  const key = ip !== undefined ? canonical(ip).toNormalizedString() : host.toLowerCase();
  return policy.allow.some((e) => {
    if (e.kind !== 'host-port' || e.port !== port) return false;
    const eip = parseIp(e.host);
    return eip !== undefined ? ip !== undefined && canonical(eip).toNormalizedString() === key : e.host === key;
  });
}

function cidrAllowed(policy: AddressPolicy, ip: Ip): boolean {
  return policy.allow.some((e) => e.kind === 'cidr' && inCidr(ip, e.range));
}

const sameIp = (a: Ip, b: Ip): boolean =>
  canonical(a).kind() === canonical(b).kind() && canonical(a).toNormalizedString() === canonical(b).toNormalizedString();

const STACK_IPS = STACK_ADDRESSES.map((a) => parseIp(a)!);
const METADATA_IPS = METADATA_ADDRESSES.map((a) => parseIp(a)!);

/** Whether `ip` is one the stack listens on (STACK_ADDRESSES), in any spelling. */
export function isStackAddress(ip: string): boolean {
  const parsed = parseIp(ip);
  return parsed !== undefined && STACK_IPS.some((s) => sameIp(s, parsed));
}

/** Why a name's host:port entry does not open this address, or null when it does. */
function notByName(ip: Ip): string | null {
  const cls = classifyParsed(ip);
  if (METADATA_IPS.some((m) => sameIp(m, ip))) return 'a metadata address';
  return NEVER_BY_NAME.has(cls) ? `a ${cls} address` : null;
}

function short(url: string): string {
  return url.length > 120 ? `${url.slice(0, 100)}… (${url.length} characters)` : url;
}

/** The decision for an address (IP literal) and port, with the name it was reached by if any. */
export function checkAddress(policy: AddressPolicy, target: { ip: string; port: number; host?: string }): Refusal | undefined {
  const ip = parseIp(target.ip);
  const where = `${target.host !== undefined && target.host !== target.ip ? `${short(target.host)} → ` : ''}${target.ip} port ${target.port}`;
  if (ip === undefined) return { code: 'address', message: `${where}: not an IP address` };
  const byAddress = hostPortAllowed(policy, target.ip, target.port) || cidrAllowed(policy, ip);
  const byName = !byAddress && target.host !== undefined && hostPortAllowed(policy, target.host, target.port);
  if (!byAddress && !byName) return unlisted(policy, ip, target.port, where);
  // what an entry opens, it opens short of the stack
  if (STACK_IPS.some((s) => sameIp(s, ip))) return { code: 'stack-address', message: `${where}: the stack's own address, which no allowlist entry opens` };
  if (policy.deniedPorts.has(target.port))
    return { code: 'stack-port', message: `${where}: port ${target.port} is one of the stack's own, which no allowlist entry opens` };
  const why = byName ? notByName(ip) : null;
  if (why !== null)
    return { code: 'address', message: `${where}: ${why}, which an entry for ${short(target.host!)} does not open (only an entry of the address itself)` };
  return undefined;
}

/** The decision for an address no entry names: public addresses on 80 and 443 only. */
function unlisted(policy: AddressPolicy, ip: Ip, port: number, where: string): Refusal | undefined {
  const cls = classifyParsed(ip);
  if (cls !== 'public') return { code: 'address', message: `${where}: ${cls} addresses are not crawled` };
  if (DEFAULT_PORTS.has(port)) return undefined;
  if (policy.deniedPorts.has(port)) return { code: 'stack-port', message: `${where}: port ${port} is one of the stack's own` };
  return { code: 'port', message: `${where}: only ports 80 and 443 are crawled unless the address is allowlisted` };
}

/**
 * The decision on a URL from its text alone: scheme, lengths, local names, literal IPs and ports.
 * A host name passes here on 80/443, and on other ports when a CIDR is allowlisted; the address it
 * resolves to is checked when connecting.
 */
export function checkUrl(policy: AddressPolicy, url: string): Refusal | undefined {
  if (url.length > MAX_URL_LENGTH) return { code: 'url-too-long', message: `${short(url)}: URL longer than ${MAX_URL_LENGTH} characters` };
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { code: 'bad-url', message: `${short(url)}: not a URL` };
  }
  return checkParsedUrl(policy, u, url);
}

/** checkUrl for a URL already parsed; `url` is the text the messages name (default its href). */
export function checkParsedUrl(policy: AddressPolicy, u: URL, url: string = u.href): Refusal | undefined {
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { code: 'scheme', message: `${short(url)}: only http and https are crawled, not ${u.protocol.replace(/:$/, '')}` };
  if (u.hostname.length > MAX_HOST_LENGTH) return { code: 'host-too-long', message: `${short(url)}: host name longer than ${MAX_HOST_LENGTH} characters` };
  if (u.href.length > MAX_URL_LENGTH) return { code: 'url-too-long', message: `${short(url)}: URL longer than ${MAX_URL_LENGTH} characters` };
  const port = effectivePort(u);
  const ip = parseIp(u.hostname);
  if (ip !== undefined) {
    const refusal = checkAddress(policy, { ip: u.hostname, port });
    return refusal === undefined ? undefined : { code: refusal.code, message: `${short(url)}: ${refusal.message}` };
  }
  if (hostPortAllowed(policy, u.hostname, port)) {
    return policy.deniedPorts.has(port)
      ? { code: 'stack-port', message: `${short(url)}: port ${port} is one of the stack's own, which no allowlist entry opens` }
      : undefined;
  }
  if (isLocalName(u.hostname)) return { code: 'local-name', message: `${short(url)}: ${u.hostname} names this machine` };
  // a name on another port may still resolve into an allowlisted range: the connection decides
  if (!DEFAULT_PORTS.has(port) && !policy.allow.some((e) => e.kind === 'cidr'))
    return { code: 'port', message: `${short(url)}: only ports 80 and 443 are crawled unless ${u.hostname}:${port} is allowlisted` };
  return undefined;
}

export interface RefusedUrl {
  url: string;
  code: RefusalCode;
  problem: string;
}

/** The URLs (seeds, targets) the policy refuses from their text, each with why, in the order given. */
export function refusedUrls(policy: AddressPolicy, urls: readonly string[]): RefusedUrl[] {
  const out: RefusedUrl[] = [];
  for (const url of urls) {
    const r = checkUrl(policy, url);
    if (r !== undefined) out.push({ url: short(url), code: r.code, problem: r.message });
  }
  return out;
}
