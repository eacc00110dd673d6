// One replay origin per archive. A replayed page runs its scripts on the origin replay serves it
// from, and everything replay stores for an archive (its page records and text in IndexedDB, its
// caches, its service worker) belongs to that origin. On one shared origin, a page of an archive
// could read what was stored for every other archive its viewer opened, in any tab; on an origin
// of its own it finds its own archive only. The origin is `<label>.<domain>`, the label a digest
// of the archive's key, so the same archive always opens on the same origin and no two share one.
// `*.localhost` names need no DNS: browsers resolve them to loopback themselves.
import { createHash } from 'node:crypto';

/** 32 hex digits: a DNS label, lowercase, 128 bits of the key's SHA-256. */
const LABEL = /^[0-9a-f]{32}$/;
/** a domain replay may serve archives under: DNS labels, at least two (no bare TLD) */
const DOMAIN = /^(?=.{1,200}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

export function isArchiveDomain(domain: string): boolean {
  return DOMAIN.test(domain);
}

/** The label of the origin `key` is replayed on. */
export function archiveLabel(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 32);
}

/** The archive label `hostname` (lowercase, no port) carries under `domain`, or null when it is no archive's origin. */
export function archiveLabelOf(hostname: string, domain: string): string | null {
  const suffix = `.${domain}`;
  if (!hostname.endsWith(suffix)) return null;
  const label = hostname.slice(0, -suffix.length);
  return LABEL.test(label) ? label : null;
}

/** The origin `key` is replayed on: `<label>.<domain>`, with the scheme and port of `base`. */
export function archiveOrigin(base: { protocol: string; port: string }, domain: string, key: string): string {
  return `${base.protocol}//${archiveLabel(key)}.${domain}${base.port === '' ? '' : `:${base.port}`}`;
}
