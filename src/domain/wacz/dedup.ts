// Payload dedup within a crawl (issue 26), pure. A response whose payload digest an earlier page
// of the same crawl already stored is written as a WARC revisit record (profile
// identical-payload-digest) referring to that earlier record, and the WACZ then requires the
// archive holding it. The capture worker may not read S3 or the ledger, so what it knows comes
// from the workflow: the digests earlier captures returned, kept in a PayloadIndex, bounded.
import { DEDUP_LIMITS, type StoredPayload } from './payload-index.ts';
import type { HttpExchange } from './warc.ts';
import { sha256Hex } from './warc.ts';

export { DEDUP_LIMITS, PayloadIndex, type StoredPayload } from './payload-index.ts';

export const REVISIT_PROFILE = 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest';

export const payloadDigest = (body: Buffer): string => `sha256:${sha256Hex(body)}`;

/** How one exchange is written: in full, or as a revisit of a payload stored elsewhere. */
export type RecordPlan = { kind: 'response' } | { kind: 'revisit'; of: StoredPayload };

/** Only a 200 with a body worth a revisit is deduplicated; its payload must be in another archive. */
function revisitOf(x: HttpExchange, known: ReadonlyMap<string, StoredPayload>, ownKey: string): StoredPayload | undefined {
  if (x.response.status !== 200 || x.response.body.length < DEDUP_LIMITS.minPayloadBytes) return undefined;
  const hit = known.get(payloadDigest(x.response.body));
  return hit !== undefined && hit.archiveKey !== ownKey ? hit : undefined;
}

/** Which exchanges of a capture become revisits; a payload repeated within the page is stored in it once, in full. */
export function planRecords(exchanges: readonly HttpExchange[], known: readonly StoredPayload[], ownKey: string): RecordPlan[] {
  const byDigest = new Map(known.map((k) => [k.digest, k]));
  return exchanges.map((x) => {
    const of = revisitOf(x, byDigest, ownKey);
    return of === undefined ? { kind: 'response' } : { kind: 'revisit', of };
  });
}

/** The WACZ keys a capture's revisits refer to: each once, sorted, never its own. */
export function requiredArchives(plan: readonly RecordPlan[], ownKey: string): string[] {
  const keys = new Set<string>();
  for (const p of plan) if (p.kind === 'revisit' && p.of.archiveKey !== ownKey) keys.add(p.of.archiveKey);
  return [...keys].sort();
}

/** What a capture stored in full that later captures may refer to: the largest payloads, bounded. */
export function storedPayloads(exchanges: readonly HttpExchange[], plan: readonly RecordPlan[], archiveKey: string): StoredPayload[] {
  const out = new Map<string, StoredPayload>();
  exchanges.forEach((x, i) => {
    if (plan[i]?.kind !== 'response' || x.response.status !== 200 || x.response.body.length < DEDUP_LIMITS.minPayloadBytes) return;
    const digest = payloadDigest(x.response.body);
    if (!out.has(digest)) out.set(digest, { digest, uri: x.url, date: x.date.toISOString(), archiveKey, bytes: x.response.body.length });
  });
  return [...out.values()].sort((a, b) => b.bytes - a.bytes).slice(0, DEDUP_LIMITS.storedPerCapture);
}
