// Verified claims (or trusted dev headers) → Identity. This is the only thing an identity provider
// replaces: callers see nothing but the Identity type.
//
// Subjects and organization ids become OpenFGA object ids (`user:<subject>`,
// `organization:<org>`), so anything that would change the meaning of a tuple is refused here:
// whitespace and control characters, `#` (a userset), a bare `*` (the wildcard), and values longer
// than OpenFGA accepts.
import type { Identity } from '../domain/identity.ts';

export const MAX_NAME_LENGTH = 200;
export const MAX_ORGANIZATIONS = 64;

export class IdentityClaimError extends Error {
  override name = 'IdentityClaimError';
}

/** A name usable as an OpenFGA object id: 1..200 printable characters, no whitespace, no `#`, not `*`. */
export function isValidName(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  if (value.length === 0 || value.length > MAX_NAME_LENGTH) return false;
  if (value === '*') return false;
  return !/[\s#\u0000-\u001f\u007f]/u.test(value);
}

function organizationsFrom(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new IdentityClaimError('organizations must be an array of strings');
  if (value.length > MAX_ORGANIZATIONS) throw new IdentityClaimError(`at most ${MAX_ORGANIZATIONS} organizations`);
  const out: string[] = [];
  for (const org of value) {
    if (!isValidName(org)) throw new IdentityClaimError(`invalid organization ${JSON.stringify(org)}`);
    if (!out.includes(org)) out.push(org);
  }
  return out;
}

/** Verified JWT claims → Identity: `sub` and the `organizations` string array (order kept, duplicates dropped). */
export function identityFromClaims(claims: Record<string, unknown>): Identity {
  if (!isValidName(claims.sub)) throw new IdentityClaimError('sub is missing or not a valid name');
  return { subject: claims.sub, organizations: organizationsFrom(claims.organizations) };
}

/** The dev resolver's two headers → Identity, or null when no subject was given. */
export function identityFromDevHeaders(subject: string | string[] | undefined, organizations: string | string[] | undefined): Identity | null {
  if (Array.isArray(subject)) throw new IdentityClaimError('one subject header only');
  const s = subject?.trim();
  if (s === undefined || s === '') return null;
  if (!isValidName(s)) throw new IdentityClaimError('subject is not a valid name');
  const raw = Array.isArray(organizations) ? organizations.join(',') : (organizations ?? '');
  const orgs = raw
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  return { subject: s, organizations: organizationsFrom(orgs) };
}
