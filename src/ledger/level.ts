// The ledger's one owner of a crawl level: its dispatch record (crawl_level_dispatches: the
// capability digests, the prefix, the deadline, the reports taken, the last heartbeat passed on)
// and every check made against it, each in one place. The rules themselves are
// src/domain/level.ts; the capability's bytes and digests src/ledger/capability.ts.
//
//   openLevel           the dispatch activity: a fresh capability, the prefix, the deadline, recorded
//   levelPresenting     the API's gate: the level, only for a call carrying one of its capabilities
//   storeReport         a report: refused past the deadline or beyond the report slots, else stored
//   passHeartbeat       a heartbeat: passed on at most once per gap, the turn given back on failure
//   levelArtifactPrefix admission: where the level's manifests and artifacts must lie
import type { Db } from '../db/connect.ts';
import { isPastDeadline, levelDeadline, levelPrefix, MAX_REPORTS_PER_LEVEL } from '../domain/level.ts';
import { StateConflictError } from '../domain/state-conflict.ts';
import { upsertLevelReport } from '../store/crawls.ts';
import { getDispatch, recordDispatch, releaseHeartbeatTurn, takeHeartbeatTurn, takeReportSlot, type LevelDispatch } from '../store/level-dispatches.ts';
import { capabilityHash, capabilityMatches, mintCapability } from './capability.ts';

export type { LevelDispatch } from '../store/level-dispatches.ts';

export interface OpenedLevel {
  /** handed to the flow once; the ledger keeps only its digest */
  capability: string;
  artifactPrefix: string;
  deadline: Date;
}

/**
 * Records one dispatch of a level. A fresh capability per attempt: the earlier ones stay valid for
 * the level, since an attempt whose answer was lost may still be what the flow is working on.
 */
export async function openLevel(db: Db, l: { crawlId: string; depth: number; timeoutSeconds: number; now?: number }): Promise<OpenedLevel> {
  const capability = mintCapability();
  const artifactPrefix = levelPrefix(l.crawlId, l.depth);
  const deadline = levelDeadline(l.now ?? Date.now(), l.timeoutSeconds);
  await recordDispatch(db, { crawlId: l.crawlId, depth: l.depth, capabilityHash: capabilityHash(capability), artifactPrefix, deadline });
  return { capability, artifactPrefix, deadline };
}

/** The level's dispatch, when `presented` is one of its capabilities (compared in constant time); else undefined. */
export async function levelPresenting(db: Db, crawlId: string, depth: number, presented: string | undefined): Promise<LevelDispatch | undefined> {
  if (presented === undefined) return undefined;
  const dispatch = await getDispatch(db, crawlId, depth);
  return dispatch !== undefined && capabilityMatches(presented, dispatch.capabilityHashes) ? dispatch : undefined;
}

/** Where the level's manifests and artifacts must lie, as dispatched (undefined: no dispatch on record). */
export async function levelArtifactPrefix(db: Db, crawlId: string, depth: number): Promise<string | undefined> {
  return (await getDispatch(db, crawlId, depth))?.artifactPrefix;
}

/**
 * Stores a report of the level (replacing an earlier one) with a fresh report id. Refused
 * (StateConflictError, the API's 409) past the level's deadline, and once the level took
 * MAX_REPORTS_PER_LEVEL reports.
 */
export async function storeReport(db: Db, dispatch: LevelDispatch, body: unknown, reportedBy: string, now = Date.now()): Promise<{ reportId: string }> {
  const { crawlId, depth } = dispatch;
  if (isPastDeadline(dispatch.deadline, now)) throw new StateConflictError(`level ${depth} is past its deadline (${dispatch.deadline.toISOString()})`);
  const stored = await db.transaction().execute(async (trx) => {
    if ((await takeReportSlot(trx, crawlId, depth, MAX_REPORTS_PER_LEVEL)) === null) return null;
    return upsertLevelReport(trx, crawlId, depth, body, reportedBy);
  });
  if (stored === null) throw new StateConflictError(`level ${depth} was already reported ${MAX_REPORTS_PER_LEVEL} times; no more reports of it are taken`);
  return stored;
}

/**
 * Passes a heartbeat on (`send`) unless one was passed on within `gapMs`: then false. When `send`
 * throws, the turn is given back so the next heartbeat is passed on, and the error rethrown.
 */
export async function passHeartbeat(db: Db, dispatch: Pick<LevelDispatch, 'crawlId' | 'depth'>, gapMs: number, send: () => Promise<void>): Promise<boolean> {
  const { crawlId, depth } = dispatch;
  if (!(await takeHeartbeatTurn(db, crawlId, depth, gapMs))) return false;
  try {
    await send();
  } catch (err) {
    await releaseHeartbeatTurn(db, crawlId, depth);
    throw err;
  }
  return true;
}
