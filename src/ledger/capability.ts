// The per-level report capability: 32 random bytes, base64url, handed to the flow in the dispatch
// and presented back with the report (and every heartbeat). The ledger keeps only its sha256, and
// compares digests in constant time, so neither a database reader nor a timing probe learns it.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Longer than any capability this ledger mints (43 characters); refused before hashing. */
export const MAX_CAPABILITY_LENGTH = 512;

export function mintCapability(): string {
  return randomBytes(32).toString('base64url');
}

export function capabilityHash(capability: string): Buffer {
  return createHash('sha256').update(capability, 'utf8').digest();
}

/** Whether `presented` is one of the capabilities whose digests are `hashes`. Looks at all of them. */
export function capabilityMatches(presented: string | undefined, hashes: readonly Uint8Array[]): boolean {
  if (presented === undefined || presented.length === 0 || presented.length > MAX_CAPABILITY_LENGTH) return false;
  const digest = capabilityHash(presented);
  let match = false;
  for (const h of hashes) {
    if (h.length === digest.length && timingSafeEqual(h, digest)) match = true;
  }
  return match;
}
