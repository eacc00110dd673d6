// Canonical SURT keys, as Python `surt.surt(url)` makes them with its defaults: pywb's
// canonicalize() and cdxj-indexer both call it, so a CDXJ keyed this way is one pywb can look up.
// A port of its steps (GoogleURLCanonicalizer, then IAURLCanonicalizer, then the host reversed),
// on byte strings (one char per byte, latin1) as the Python works on bytes. Pure.
// warcio.js's getSurt is not used: it differs from Python's surt on 22 of the 54 fixture URLs
// (surt-fixtures.json). It keeps IPv6 brackets, a trailing slash or dot, `//`, `www3.` in an
// upper-case host, escapes as they came (`%7E`, `%C3`), session ids and `:0`, and sorts `a-b=2`
// before `a=1`.
import { domainToASCII } from 'node:url';

/** handyurl's RFC 2396 regex: scheme, authority, path, query, fragment. */
const URI = /^(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?:(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?)?(?:#(.*))?$/s;
const HAS_SCHEME = /^[a-zA-Z][a-zA-Z0-9+\-.]*:/;
/** what Python's quote() leaves alone given surt's safe set: all of 0x21-0x7e but `#` and `%` */
const SAFE = /[A-Za-z0-9_.\-~!"$&'()*+,/:;<=>?@[\\\]^`{|}]/;
const DECIMAL_IP = /^([1-9][0-9]*)(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?$/;
const OCTAL_IP = /^(0[0-7]*)(\.[0-7]+)?(\.[0-7]+)?(\.[0-7]+)?$/;
const WWW_DIGITS = /^www\d*\./;
const PATH_SESSION_IDS = [/^(.*\/)(\((?:[a-z]\([0-9a-z]{24}\))+\)\/)([^?]+\.aspx.*)$/i, /^(.*\/)(\([0-9a-z]{24}\)\/)([^?]+\.aspx.*)$/i];
const QUERY_SESSION_IDS = [
  /^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$/i,
  /^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$/i,
];

const bytesOf = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');
/** Python's bytes.lower(): A-Z only (a byte string's other chars are bytes of UTF-8) */
const lower = (s: string): string => s.replace(/[A-Z]+/g, (c) => c.toLowerCase());

function unescapeRepeatedly(s: string): string {
  for (;;) {
    const un = s.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (un === s) return s;
    s = un;
  }
}

function escapeOnce(s: string): string {
  let out = '';
  for (const c of s) out += SAFE.test(c) ? c : `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** inet_aton: 1 to 4 parts (decimal, or octal with a leading 0), the last filling the bytes left. */
function inetAton(host: string): string | undefined {
  const parts = host.split('.').map((p) => (p.length > 1 && p.startsWith('0') ? (/^[0-7]+$/.test(p) ? parseInt(p, 8) : NaN) : Number(p)));
  const last = parts.pop()!;
  if (parts.some((p) => !(p <= 255)) || !(last < 256 ** (4 - parts.length))) return undefined;
  const n = parts.reduce((acc, p, i) => acc + p * 256 ** (3 - i), 0) + last;
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

function ipFormat(host: string): string | undefined {
  if (/^\d+$/.test(host)) {
    const n = BigInt(host) & 0xffffffffn;
    return [24n, 16n, 8n, 0n].map((shift) => String((n >> shift) & 0xffn)).join('.');
  }
  return DECIMAL_IP.test(host) || OCTAL_IP.test(host) ? inetAton(host) : undefined;
}

function canonicalHost(raw: string): string {
  let host = unescapeRepeatedly(lower(raw));
  if (/[^\x00-\x7f]/.test(host)) {
    const ascii = domainToASCII(Buffer.from(host, 'latin1').toString('utf8'));
    if (ascii !== '') host = ascii;
  }
  host = host.replaceAll('..', '.').replace(/^\.+|\.+$/g, '');
  const ip = ipFormat(host);
  return lower(ip ?? escapeOnce(lower(host))).replace(WWW_DIGITS, '');
}

/** Google's path normalisation: `.` and empty segments dropped (a last empty one kept), `..` resolved. */
function normalizePath(path: string): string {
  if (path === '') return '/';
  const kept: string[] = [];
  for (const p of path.split('/').slice(1)) {
    if (p === '.') continue;
    if (p === '..' && kept.length > 0) kept.pop();
    else kept.push(p);
  }
  if (kept.length === 0) return '/';
  return (
    '/' +
    kept
      .slice(0, -1)
      .filter((p) => p !== '')
      .map((p) => `${p}/`)
      .join('') +
    kept[kept.length - 1]!
  );
}

function canonicalPath(raw: string, hasHost: boolean): string {
  let path = unescapeRepeatedly(raw);
  if (hasHost) path = normalizePath(path);
  path = lower(escapeOnce(path));
  for (const re of PATH_SESSION_IDS) {
    const m = re.exec(path);
    if (m) path = m[1]! + m[3]!;
  }
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** Arguments sorted as Python sorts (name, value) tuples: a bare name before the same name with `=`. */
function alphaReorder(query: string): string {
  if (query.length <= 1) return query;
  const args = query.split('&').map((a) => {
    const i = a.indexOf('=');
    return i < 0 ? { name: a, value: undefined } : { name: a.slice(0, i), value: a.slice(i + 1) };
  });
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  args.sort((a, b) => cmp(a.name, b.name) || (a.value === undefined ? (b.value === undefined ? 0 : -1) : b.value === undefined ? 1 : cmp(a.value, b.value)));
  return args.map((a) => (a.value === undefined ? a.name : `${a.name}=${a.value}`)).join('&');
}

function canonicalQuery(raw: string): string | undefined {
  let query = escapeOnce(unescapeRepeatedly(raw));
  for (const re of QUERY_SESSION_IDS) {
    const m = re.exec(query);
    if (m) query = m[1]! + (m[2] ?? '');
  }
  query = alphaReorder(lower(query));
  return query === '' ? undefined : query;
}

/** The host and port of an authority, as Python's urlsplit reads them (user info dropped). */
function hostAndPort(netloc: string): { host: string; port: string } {
  const info = netloc.slice(netloc.lastIndexOf('@') + 1).replace(/:$/, '');
  const bracket = info.indexOf('[');
  if (bracket >= 0) {
    const close = info.indexOf(']', bracket);
    const rest = close < 0 ? '' : info.slice(close + 1);
    return { host: info.slice(bracket + 1, close < 0 ? undefined : close), port: rest.includes(':') ? rest.slice(rest.indexOf(':') + 1) : '' };
  }
  const colon = info.indexOf(':');
  return colon < 0 ? { host: info, port: '' } : { host: info.slice(0, colon), port: info.slice(colon + 1) };
}

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

/** The SURT key of a URL: `com,example:8080)/path?a=1&b=2`, as pywb and cdxj-indexer key it. */
export function surt(url: string): string {
  let s = bytesOf(url)
    .trim()
    .replace(/[\n\r\t]/g, '');
  if (s === '') return '-';
  if (s.startsWith('filedesc')) return url;
  if (!HAS_SCHEME.test(s)) s = `http://${s}`;
  s = s.replace(/^(?:https?:\/\/)*(https?:\/\/)/, '$1');
  const m = URI.exec(s)!;
  const scheme = m[1]!;
  const { host: rawHost, port: rawPort } = hostAndPort(m[2] ?? '');
  const host = rawHost === '' ? undefined : canonicalHost(rawHost);
  // Python reads port 0 as no port
  const port = /^\d+$/.test(rawPort) && Number(rawPort) !== 0 && Number(rawPort) !== DEFAULT_PORTS[lower(scheme)] ? `:${Number(rawPort)}` : '';
  const path = canonicalPath(m[3] ?? '', host !== undefined);
  const query = m[4] === undefined || m[4] === '' ? undefined : canonicalQuery(m[4]);
  const q = query === undefined ? '' : `?${query}`;
  if (host === undefined) return Buffer.from(`${scheme}:${path}${q}`, 'latin1').toString('utf8');
  return `${host.split('.').reverse().join(',')}${port})${path === '' ? '/' : path}${q}`;
}
