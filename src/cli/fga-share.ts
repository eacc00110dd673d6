// Sharing one archive with someone outside its organization, for a limited time:
//   npm run fga:share <archiveId> <user> <duration>     duration: 30s, 15m, 2h, 7d
//   npm run fga:unshare <archiveId> <user>
// share writes `user:<user> viewer archive:<id>` with the non_expired_grant condition
// {grant_time: now, grant_duration}; the share lapses on its own (current_time is sent on every
// check). unshare deletes the tuple. Both go straight to OpenFGA — there is no row to keep in step,
// so no outbox — and both then ask the signing question again (can_view at HIGHER_CONSISTENCY)
// and print the answer, rather than inferring it from what was written.
import { pathToFileURL } from 'node:url';
import { ClientWriteRequestOnDuplicateWrites, ClientWriteRequestOnMissingDeletes, ConsistencyPreference, type OpenFgaClient } from '@openfga/sdk';
import { ConfigError, loadConfig, type Config } from '../config/env.ts';
import { isValidName } from '../config/identity.ts';
import { createDb, type Db } from '../db/connect.ts';
import { isUuid } from '../domain/uuid.ts';
import { findArchive } from '../store/archives.ts';
import { createFgaClient } from '../fga/client.ts';
import { archiveRef, checkContext, userRef } from '../fga/tuples.ts';

export const SHARE_CONDITION = 'non_expired_grant';
const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
/** The longest share: a year. Nothing outside the organization is shared without an expiry. */
export const MAX_SHARE_SECONDS = 366 * 86_400;

export class ShareUsageError extends Error {
  override name = 'ShareUsageError';
}

/** "30s" | "15m" | "2h" | "7d" → seconds (1 s .. 366 d). */
export function parseShareDuration(text: string): number {
  const m = /^([1-9][0-9]{0,8})([smhd])$/.exec(text.trim());
  if (!m) throw new ShareUsageError(`duration ${JSON.stringify(text)}: use a whole number with s, m, h or d (30s, 15m, 2h, 7d)`);
  const seconds = Number(m[1]) * UNITS[m[2] as keyof typeof UNITS];
  if (seconds > MAX_SHARE_SECONDS) throw new ShareUsageError(`duration ${text}: at most 366d`);
  return seconds;
}

/** The model's duration type takes Go durations; seconds are exact: "3600s". */
export const grantDuration = (seconds: number): string => `${seconds}s`;

/** "bob" or "user:bob" → "bob" */
export function shareSubject(user: string): string {
  const s = user.startsWith('user:') ? user.slice('user:'.length) : user;
  if (!isValidName(s) || s.includes(':')) throw new ShareUsageError(`user ${JSON.stringify(user)} is not a valid name`);
  return s;
}

function viewerTuple(archiveId: string, subject: string) {
  return { user: userRef(subject), relation: 'viewer', object: archiveRef(archiveId) };
}

/** The signing question for someone who brings no organizations. */
async function canViewAlone(fga: OpenFgaClient, archiveId: string, subject: string, now: Date): Promise<boolean> {
  const res = await fga.check(
    { ...viewerTuple(archiveId, subject), relation: 'can_view', context: checkContext(now) },
    { consistency: ConsistencyPreference.HigherConsistency },
  );
  return res.allowed === true;
}

export interface ShareResult {
  archiveId: string;
  subject: string;
  grantTime: string;
  grantDuration: string;
  expiresAt: string;
  canViewNow: boolean;
  replaced: boolean;
}

async function requireArchive(db: Db, archiveId: string): Promise<string> {
  if (!isUuid(archiveId)) throw new ShareUsageError(`archive id ${JSON.stringify(archiveId)} is not a UUID`);
  const id = archiveId.toLowerCase();
  if ((await findArchive(db, id)) === undefined) throw new ShareUsageError(`no archive ${id} in the ledger`);
  return id;
}

async function existingShare(fga: OpenFgaClient, archiveId: string, subject: string): Promise<boolean> {
  const res = await fga.read(viewerTuple(archiveId, subject), { consistency: ConsistencyPreference.HigherConsistency });
  return res.tuples.length > 0;
}

/** Writes the conditioned viewer tuple (replacing an earlier share of the same archive with the same user). */
export async function share(
  deps: { db: Db; fga: OpenFgaClient },
  archiveIdArg: string,
  user: string,
  duration: string,
  now = new Date(),
): Promise<ShareResult> {
  const seconds = parseShareDuration(duration);
  const subject = shareSubject(user);
  const archiveId = await requireArchive(deps.db, archiveIdArg);
  const tuple = viewerTuple(archiveId, subject);
  // A tuple's condition cannot be changed in place: an earlier share is deleted first.
  const replaced = await existingShare(deps.fga, archiveId, subject);
  if (replaced) await deps.fga.write({ deletes: [tuple] }, { conflict: { onMissingDeletes: ClientWriteRequestOnMissingDeletes.Ignore } });
  const grantTime = now.toISOString();
  await deps.fga.write(
    { writes: [{ ...tuple, condition: { name: SHARE_CONDITION, context: { grant_time: grantTime, grant_duration: grantDuration(seconds) } } }] },
    { conflict: { onDuplicateWrites: ClientWriteRequestOnDuplicateWrites.Ignore } },
  );
  return {
    archiveId,
    subject,
    grantTime,
    grantDuration: grantDuration(seconds),
    expiresAt: new Date(now.getTime() + seconds * 1000).toISOString(),
    canViewNow: await canViewAlone(deps.fga, archiveId, subject, new Date()),
    replaced,
  };
}

/** Deletes the viewer tuple. Signing stops at once (the signing check is strongly consistent). */
export async function unshare(
  deps: { db: Db; fga: OpenFgaClient },
  archiveIdArg: string,
  user: string,
): Promise<{ archiveId: string; subject: string; deleted: boolean; canViewNow: boolean }> {
  const subject = shareSubject(user);
  const archiveId = await requireArchive(deps.db, archiveIdArg);
  const deleted = await existingShare(deps.fga, archiveId, subject);
  await deps.fga.write({ deletes: [viewerTuple(archiveId, subject)] }, { conflict: { onMissingDeletes: ClientWriteRequestOnMissingDeletes.Ignore } });
  return { archiveId, subject, deleted, canViewNow: await canViewAlone(deps.fga, archiveId, subject, new Date()) };
}

const USAGE = 'usage: npm run fga:share <archiveId> <user> <duration (30s|15m|2h|7d)>\n       npm run fga:unshare <archiveId> <user>';

function loadConfigOrUndefined(): Config | undefined {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    return undefined;
  }
}

async function printShare(deps: { db: Db; fga: OpenFgaClient }, archiveId: string, user: string, duration: string): Promise<void> {
  const r = await share(deps, archiveId, user, duration);
  console.log(
    `shared archive:${r.archiveId} with user:${r.subject} until ${r.expiresAt} (${r.replaced ? 'replaced the earlier share; ' : ''}wrote: user:${r.subject} viewer archive:${r.archiveId} with ${SHARE_CONDITION} {grant_time: ${r.grantTime}, grant_duration: ${r.grantDuration}})`,
  );
  console.log(`user:${r.subject} ${r.canViewNow ? 'can' : 'cannot'} view it now`);
}

async function printUnshare(deps: { db: Db; fga: OpenFgaClient }, archiveId: string, user: string): Promise<void> {
  const r = await unshare(deps, archiveId, user);
  console.log(
    `${r.deleted ? 'unshared' : 'was not shared:'} archive:${r.archiveId} with user:${r.subject} (deleted: user:${r.subject} viewer archive:${r.archiveId})`,
  );
  console.log(`user:${r.subject} ${r.canViewNow ? 'can still view it (another relation allows it)' : 'cannot view it'}`);
}

const isValidCall = (command: string | undefined, archiveId: string | undefined, user: string | undefined, duration: string | undefined): boolean =>
  (command === 'share' || command === 'unshare') && archiveId !== undefined && user !== undefined && (command === 'unshare' || duration !== undefined);

async function main(argv: string[]): Promise<number> {
  const [command, archiveId, user, duration] = argv;
  if (!isValidCall(command, archiveId, user, duration)) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfigOrUndefined();
  if (config === undefined) return 1;
  const deps = { db: createDb(config.databaseUrl, 2), fga: createFgaClient(config.fga) };
  try {
    if (command === 'share') await printShare(deps, archiveId!, user!, duration!);
    else await printUnshare(deps, archiveId!, user!);
    return 0;
  } catch (err) {
    if (!(err instanceof ShareUsageError)) throw err;
    console.error(err.message);
    return 2;
  } finally {
    await deps.db.destroy();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
