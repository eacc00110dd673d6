// The relationship tuples the ledger writes, and the contextual tuples built per request.
import type { Identity } from '../domain/identity.ts';

export interface Tuple {
  user: string;
  relation: string;
  object: string;
  condition?: { name: string; context?: Record<string, unknown> };
}

export const userRef = (subject: string): string => `user:${subject}`;
export const orgRef = (orgId: string): string => `organization:${orgId}`;
export const jobRef = (crawlId: string): string => `capture_job:${crawlId}`;
export const archiveRef = (archiveId: string): string => `archive:${archiveId}`;

/** capture_job:<crawlId> has owner user:<submitter> and parent organization:<orgId>. */
export function jobTuples(crawlId: string, submittedBy: string, orgId: string): Tuple[] {
  return [
    { user: userRef(submittedBy), relation: 'owner', object: jobRef(crawlId) },
    { user: orgRef(orgId), relation: 'parent', object: jobRef(crawlId) },
  ];
}

/** each archive has parent capture_job:<crawlId>. */
export function archiveTuples(archiveId: string, crawlId: string): Tuple[] {
  return [{ user: jobRef(crawlId), relation: 'parent', object: archiveRef(archiveId) }];
}

/** Membership is never stored: it arrives per request from the caller's identity. */
export function membershipTuples(identity: Identity): { user: string; relation: string; object: string }[] {
  return identity.organizations.map((org) => ({ user: userRef(identity.subject), relation: 'member', object: orgRef(org) }));
}

/** Context every check carries, so conditioned shares lapse without a sweeper. */
export function checkContext(now: Date = new Date()): { current_time: string } {
  return { current_time: now.toISOString() };
}
