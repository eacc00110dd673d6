// fga:grant / fga:revoke: the stored half of "who may start a crawl". Membership is the identity
// provider's to assert and is never stored, so `member` is refused; what someone may do is
// OpenFGA's, so submitter and admin are written here. After the write the same question the API
// asks (can_submit, HIGHER_CONSISTENCY) is asked again, and the answer printed is that answer, not
// one inferred from what was written.
import { ClientWriteRequestOnDuplicateWrites, ClientWriteRequestOnMissingDeletes, type OpenFgaClient } from '@openfga/sdk';
import { canSubmit } from './authorize.ts';
import { orgRef, userRef } from './tuples.ts';

export const GRANTABLE = ['submitter', 'admin'] as const;
export type GrantableRelation = (typeof GRANTABLE)[number];
export type GrantAction = 'grant' | 'revoke';

export const USAGE = [
  'usage: npm run fga:grant <relation> <user> <org>',
  '       npm run fga:revoke <relation> <user> <org>',
  '  <relation>  submitter or admin (either lets <user> start crawls for <org>)',
  '  <user>      a subject as the identity provider names it, e.g. alice (or user:alice)',
  '  <org>       an organization id, e.g. acme (or organization:acme)',
].join('\n');

export const MEMBER_REFUSED =
  "member is not stored: membership comes from the identity provider (the organizations in the caller's token) and reaches OpenFGA as a contextual tuple on every request. " +
  'Storing it too would give one fact two homes, with no answer when they disagree. Grant submitter or admin instead.';

export type ParsedGrant = { ok: true; action: GrantAction; relation: GrantableRelation; user: string; org: string } | { ok: false; message: string };

const ID = /^[^\s:#*]+$/;

function strip(value: string, prefix: string): string {
  return value.startsWith(prefix) ? value.slice(prefix.length) : value;
}

/** argv as the CLI receives it after the script: [action, relation, user, org]. */
export function parseGrantArgs(argv: readonly string[]): ParsedGrant {
  const [action, relation, rawUser, rawOrg, ...extra] = argv;
  if (action !== 'grant' && action !== 'revoke') return { ok: false, message: `unknown action ${JSON.stringify(action ?? '')} (grant or revoke)\n${USAGE}` };
  if (relation === undefined || rawUser === undefined || rawOrg === undefined) {
    const missing = relation === undefined ? '<relation>' : rawUser === undefined ? '<user>' : '<org>';
    return { ok: false, message: `fga:${action}: missing ${missing}\n${USAGE}` };
  }
  if (extra.length > 0) return { ok: false, message: `fga:${action}: unexpected ${extra.map((e) => JSON.stringify(e)).join(' ')}\n${USAGE}` };
  if (relation === 'member') return { ok: false, message: `fga:${action}: refused: ${MEMBER_REFUSED}` };
  if (!(GRANTABLE as readonly string[]).includes(relation)) {
    return { ok: false, message: `fga:${action}: unknown relation ${JSON.stringify(relation)} (submitter or admin)\n${USAGE}` };
  }
  const user = strip(rawUser, 'user:');
  const org = strip(rawOrg, 'organization:');
  if (!ID.test(user)) return { ok: false, message: `fga:${action}: ${JSON.stringify(rawUser)} is not a user id (no spaces, ':', '#' or '*')\n${USAGE}` };
  if (!ID.test(org)) return { ok: false, message: `fga:${action}: ${JSON.stringify(rawOrg)} is not an organization id (no spaces, ':', '#' or '*')\n${USAGE}` };
  return { ok: true, action, relation: relation as GrantableRelation, user, org };
}

export interface GrantOutcome {
  /** can_submit asked again after the write, at HIGHER_CONSISTENCY. */
  allowed: boolean;
  /** The tuple written or deleted, as `user:alice submitter organization:acme`. */
  tuple: string;
  /** The line the CLI prints. */
  line: string;
}

export function grantLine(action: GrantAction, user: string, org: string, tuple: string, allowed: boolean): string {
  const verdict = allowed ? '始められます' : '始められません';
  const what = action === 'grant' ? `書いた: ${tuple}` : `消した: ${tuple}`;
  // Revoking one relation while another still allows it: say so, or the line reads like a bug.
  const other = action === 'revoke' && allowed ? '、ほかの関係で許されています' : '';
  return `${user} は ${org} のクロールを${verdict} (${what}${other})`;
}

/** Writes (grant) or deletes (revoke) the tuple, then asks can_submit again. Idempotent both ways. */
export async function applyGrant(fga: OpenFgaClient, action: GrantAction, relation: GrantableRelation, user: string, org: string): Promise<GrantOutcome> {
  const key = { user: userRef(user), relation, object: orgRef(org) };
  if (action === 'grant') {
    await fga.write({ writes: [key] }, { conflict: { onDuplicateWrites: ClientWriteRequestOnDuplicateWrites.Ignore } });
  } else {
    await fga.write({ deletes: [key] }, { conflict: { onMissingDeletes: ClientWriteRequestOnMissingDeletes.Ignore } });
  }
  // The same question the API asks a caller who names this organization.
  const allowed = await canSubmit(fga, { subject: user, organizations: [org] }, org);
  const tuple = `${key.user} ${key.relation} ${key.object}`;
  return { allowed, tuple, line: grantLine(action, user, org, tuple, allowed) };
}

export interface GrantIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * The whole CLI minus process handling: returns the exit code. `fga` is created only once the
 * arguments are good, so a usage error needs no configuration.
 */
export async function runGrantCli(argv: readonly string[], fga: () => OpenFgaClient, io: GrantIo): Promise<number> {
  const parsed = parseGrantArgs(argv);
  if (!parsed.ok) {
    io.err(parsed.message);
    return 2;
  }
  try {
    const outcome = await applyGrant(fga(), parsed.action, parsed.relation, parsed.user, parsed.org);
    io.out(outcome.line);
    return 0;
  } catch (err) {
    io.err(`fga:${parsed.action}: ${(err as Error).message}`);
    return 1;
  }
}
