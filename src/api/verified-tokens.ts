// Bearer tokens whose signature, issuer, audience and claims were verified a moment ago, so a
// caller sending the same token again is not verified again on every request (the signature check
// was about a tenth of the API's CPU while signing URLs). Only what cannot change is remembered:
// expiry is checked against the clock on every use, and an entry is verified afresh after
// REVERIFY_MS, so a key the issuer withdrew stops working within that (jose's own JWKS cache
// already keeps a key for longer). Keyed by the token's SHA-256, at most MAX_ENTRIES, oldest
// dropped first.
import { createHash } from 'node:crypto';
import type { Identity } from '../domain/identity.ts';

export const REVERIFY_MS = 60_000;
export const MAX_ENTRIES = 10_000;

interface Entry {
  identity: Identity;
  /** the token's exp, in ms */
  expiresAt: number;
  verifiedAt: number;
}

export interface VerifiedTokens {
  /** the identity of a token verified within REVERIFY_MS that has not expired, else undefined */
  get(token: string, now?: number): Identity | undefined;
  remember(token: string, identity: Identity, exp: number, now?: number): void;
}

/** clockToleranceMs: the same leeway the verifier gives exp. */
export function verifiedTokens(clockToleranceMs: number): VerifiedTokens {
  const entries = new Map<string, Entry>();
  const keyOf = (token: string): string => createHash('sha256').update(token).digest('base64');
  return {
    get(token, now = Date.now()) {
      const key = keyOf(token);
      const e = entries.get(key);
      if (e === undefined) return undefined;
      if (now - e.verifiedAt >= REVERIFY_MS || now >= e.expiresAt + clockToleranceMs) {
        entries.delete(key);
        return undefined;
      }
      return e.identity;
    },
    remember(token, identity, exp, now = Date.now()) {
      const key = keyOf(token);
      entries.delete(key);
      entries.set(key, { identity, expiresAt: exp * 1000, verifiedAt: now });
      if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    },
  };
}
