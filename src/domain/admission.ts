// What a reported page becomes in the ledger, decided without I/O. The level report carries the
// flow's word; the manifest (<key>.result.json) is what the capturer itself wrote, and where
// the two disagree the manifest wins — except that a cancelled capture never becomes an archive.
// Shared by level admission and by reconcile.
import Type from 'typebox';
import { QaAttemptSchema, type QaAttempt } from './qa.ts';
import { Compile } from 'typebox/compile';
import { ERROR_TYPE_CANCELLED, ManifestAsRead, type LinksArtifact, type Manifest, type ManifestArtifact, type PageReport } from './contract.ts';
import { artifactPlacementProblem, expectedManifestKey, prefixOfManifestKey } from './level-dispatch.ts';
import { validDate } from './iso-date.ts';
import { nulPathInJson } from './nul.ts';
import { truncationNote } from './page-text.ts';

export type PageState = 'pending' | 'captured' | 'failed' | 'skipped';

/** The outcome of looking a manifest up at exactly the reported key. */
export type ManifestRead =
  /** the report carried no manifestKey (manifestError, or no task at all) */
  | { kind: 'absent' }
  /** the store answered that nothing is at the key */
  | { kind: 'missing' }
  /** the store could not be asked (down, timeout): reconcile will try again */
  | { kind: 'unreadable'; error: string }
  /** something is there but it is not a manifest of this task */
  | { kind: 'invalid'; error: string }
  /** a manifest of this task whose key or artifacts lie outside the level's place: the page is
   * failed with `error` and nothing of it is registered or read */
  | { kind: 'refused'; error: string }
  | { kind: 'ok'; manifest: Manifest };

export class ManifestShapeError extends Error {
  override name = 'ManifestShapeError';
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const optStr = (v: unknown): v is string | undefined => v === undefined || typeof v === 'string';
const isLink = (l: unknown): l is { href: string; rel?: string } => isObj(l) && typeof l.href === 'string' && optStr(l.rel);

const manifestAsRead = Compile(ManifestAsRead);
const qaAttempts = Compile(Type.Array(QaAttemptSchema, { minItems: 1, maxItems: 2 }));

/**
 * The capture's quality check as the ledger keeps it: the kept (last) attempt's verdict and scores,
 * and how many attempts were made. A check the capturer wrote in another shape is left out: it
 * says nothing the ledger could show.
 */
export interface QaNote {
  verdict: QaAttempt['verdict'];
  attempts: number;
  pixels: number;
  text: number;
  misses: number;
}

export function qaNote(qa: unknown): QaNote | undefined {
  if (!qaAttempts.Check(qa)) return undefined;
  const kept = qa[qa.length - 1]!;
  return { verdict: kept.verdict, attempts: qa.length, pixels: kept.pixels, text: kept.text, misses: kept.misses };
}

/** provenance.qa as admission stored it (qaNote), or undefined for anything else. */
export function qaFromProvenance(p: Record<string, unknown> | null | undefined): QaNote | undefined {
  const q = p?.qa as Partial<QaNote> | undefined | null;
  if (q === undefined || q === null || typeof q !== 'object') return undefined;
  if ((q.verdict !== 'good' && q.verdict !== 'review') || ![q.attempts, q.pixels, q.text, q.misses].every((n) => typeof n === 'number')) return undefined;
  return { verdict: q.verdict, attempts: q.attempts!, pixels: q.pixels!, text: q.text!, misses: q.misses! };
}

/** The first problem a validator found, as a path and what was wrong there. */
function shapeProblem(errors: readonly { instancePath: string; message: string }[]): string {
  const e = errors[0];
  return e === undefined ? 'unknown' : `${e.instancePath || '/'} ${e.message}`;
}

/** Parses `<key>.result.json` against the contract's ManifestAsRead. Throws ManifestShapeError. */
export function parseManifest(text: string): Manifest {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new ManifestShapeError(`manifest is not JSON: ${(err as Error).message}`);
  }
  // Postgres text and jsonb cannot hold U+0000: one such string would fail the whole level's write
  const nul = nulPathInJson(text, v);
  if (nul !== undefined) throw new ManifestShapeError(`manifest has a NUL character in a string (at ${nul.join('.')})`);
  if (!isObj(v)) throw new ManifestShapeError('manifest is not an object');
  if (!manifestAsRead.Check(v)) throw new ManifestShapeError(`manifest does not fit the contract: ${shapeProblem(manifestAsRead.Errors(v))}`);
  const artifacts = v.artifacts ?? [];
  return { ...(v as unknown as Manifest), artifacts: artifacts as ManifestArtifact[] };
}

/** Parses the `links` artifact: `{ url, finalUrl?, links: [{ href, rel? }] }`. */
export function parseLinksArtifact(text: string): LinksArtifact {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new ManifestShapeError(`links artifact is not JSON: ${(err as Error).message}`);
  }
  if (!isObj(v) || !Array.isArray(v.links)) throw new ManifestShapeError('links artifact has no links array');
  // nearly every artifact's links are all well formed: then the parsed array is kept as it is
  const links = v.links.every(isLink) ? v.links : v.links.filter(isLink);
  return { url: typeof v.url === 'string' ? v.url : '', ...(typeof v.finalUrl === 'string' ? { finalUrl: v.finalUrl } : {}), links };
}

export const isCancelled = (m: Manifest): boolean => m.error?.type === ERROR_TYPE_CANCELLED;

/** An archives row, as the ledger registers it. */
export interface ArchiveRecord {
  taskId: string;
  bucket: string;
  objectKey: string;
  /** the version of objectKey the capture wrote (the manifest's versionId), when it reported one */
  objectVersion?: string;
  url: string;
  finalUrl: string | null;
  sha256: string | null;
  size: number | null;
  capturedAt: string;
  provenance: Record<string, unknown>;
  /** the WACZ keys (same bucket) this one's revisits refer to (manifest `requires`) */
  requires?: string[];
}

/** failed: the capture failed; cancelled: ERROR_TYPE_CANCELLED; no-wacz: succeeded without a WACZ;
 * refused: its manifest key or artifacts lie outside the level's prefix or bucket (checkPlacement) */
export type NotAdmittedReason = 'failed' | 'cancelled' | 'no-wacz' | 'refused';

export type ArchiveDecision = { admit: true; archive: ArchiveRecord } | { admit: false; reason: NotAdmittedReason };

/** What the ledger keeps of a manifest beside the archive's columns: only the fields it has. */
function provenanceOf(m: Manifest, manifestKey: string): Record<string, unknown> {
  const title = typeof m.title === 'string' && m.title !== '' ? m.title : undefined;
  const noted: Record<string, unknown> = {
    software: m.software,
    startedAt: m.startedAt,
    finishedAt: m.finishedAt,
    documentWithheld: m.documentWithheld,
    truncated: truncationNote(m.truncated),
    qa: qaNote(m.qa),
    title,
    thumbnail: thumbnailOf(m),
  };
  const provenance: Record<string, unknown> = { manifestKey, formats: m.artifacts.map((a) => a.format) };
  for (const [k, v] of Object.entries(noted)) if (v !== undefined) provenance[k] = v;
  return provenance;
}

/**
 * Only a succeeded capture with a WACZ becomes an archive. A failed one uploaded nothing, and
 * recording it would hand out URLs for objects that are not there.
 */
export function archiveFromManifest(m: Manifest, ctx: { manifestKey: string; fallbackUrl?: string; fallbackFinishedAt?: string; now: Date }): ArchiveDecision {
  if (isCancelled(m)) return { admit: false, reason: 'cancelled' };
  if (m.status !== 'succeeded') return { admit: false, reason: 'failed' };
  const wacz = m.artifacts.find((a) => a.format === 'wacz');
  if (wacz === undefined) return { admit: false, reason: 'no-wacz' };
  const provenance = provenanceOf(m, ctx.manifestKey);
  return {
    admit: true,
    archive: {
      taskId: m.taskId,
      bucket: wacz.bucket,
      objectKey: wacz.key,
      ...(wacz.versionId !== undefined && wacz.versionId !== '' ? { objectVersion: wacz.versionId } : {}),
      url: m.url || ctx.fallbackUrl || '',
      finalUrl: m.finalUrl ?? null,
      sha256: typeof wacz.sha256 === 'string' ? wacz.sha256 : null,
      // a size the ledger's bigint cannot hold is unknown rather than a failed write
      size: typeof wacz.size === 'number' && Number.isSafeInteger(wacz.size) && wacz.size >= 0 ? wacz.size : null,
      capturedAt: validDate(m.finishedAt) ?? validDate(ctx.fallbackFinishedAt) ?? ctx.now.toISOString(),
      provenance,
      ...requiresOf(m, wacz.key),
    },
  };
}

/** Where the ledger finds an archive's screenshot: the capture's webp (smaller), else its png. */
export interface ThumbnailRef {
  format: 'png' | 'webp';
  bucket: string;
  key: string;
  /** the version the capture wrote, when it reported one */
  versionId?: string;
}

function thumbnailOf(m: Manifest): ThumbnailRef | undefined {
  const shot = m.artifacts.find((a) => a.format === 'webp') ?? m.artifacts.find((a) => a.format === 'png');
  if (shot === undefined) return undefined;
  return { format: shot.format as ThumbnailRef['format'], bucket: shot.bucket, key: shot.key, ...versionOf(shot) };
}

const versionOf = (a: { versionId?: unknown }): { versionId?: string } =>
  typeof a.versionId === 'string' && a.versionId !== '' ? { versionId: a.versionId } : {};

/** provenance.thumbnail as admission stored it, or undefined for anything else. */
export function thumbnailFromProvenance(p: Record<string, unknown> | null | undefined): ThumbnailRef | undefined {
  const t = p?.thumbnail as Partial<ThumbnailRef> | undefined;
  if (t === undefined || t === null || typeof t !== 'object') return undefined;
  if ((t.format !== 'png' && t.format !== 'webp') || typeof t.bucket !== 'string' || typeof t.key !== 'string') return undefined;
  return { format: t.format, bucket: t.bucket, key: t.key, ...versionOf(t) };
}

/** The archives a manifest requires: each once, sorted, never itself (a self-edge would make it undeletable). */
function requiresOf(m: Manifest, ownKey: string): { requires?: string[] } {
  const keys = [...new Set(m.requires ?? [])].filter((k) => k !== ownKey).sort();
  return keys.length > 0 ? { requires: keys } : {};
}

/** What one reported page becomes. */
export interface PageAdmission {
  url: string;
  state: Exclude<PageState, 'pending'>;
  skipReason: string | null;
  taskId: string | null;
  finalUrl: string | null;
  submittedAt: string | null;
  finishedAt: string | null;
  /** the report said otherwise and the manifest corrected it */
  corrected: boolean;
  archive: ArchiveRecord | null;
  /** why a page with a readable manifest did not become an archive */
  notAdmitted: NotAdmittedReason | null;
  /** the `links` artifact, when the manifest has one */
  links: { bucket: string; key: string } | null;
  /** why the ledger failed the page itself (a refused manifest) */
  failure?: string;
}

type ReportedBase = Pick<PageAdmission, 'url' | 'skipReason' | 'taskId' | 'finalUrl' | 'submittedAt' | 'finishedAt'>;

/** What the report alone says of a page. */
function reportedBase(page: PageReport): ReportedBase {
  return {
    url: page.url,
    skipReason: page.status === 'skipped' ? (page.skipReason ?? null) : null,
    taskId: page.taskId ?? null,
    finalUrl: page.finalUrl ?? null,
    submittedAt: validDate(page.submittedAt) ?? null,
    finishedAt: validDate(page.finishedAt) ?? null,
  };
}

/** A succeeded (not cancelled) capture's `links` artifact, or null. */
export function linksArtifactOf(m: Manifest): ManifestArtifact | null {
  if (m.status !== 'succeeded' || isCancelled(m)) return null;
  return m.artifacts.find((a) => a.format === 'links') ?? null;
}

/** The manifest wins over the report; without a readable manifest of this task the report stands. */
export function admitPage(page: PageReport, read: ManifestRead, now: Date): PageAdmission {
  const base = reportedBase(page);
  if (read.kind === 'refused') {
    return {
      ...base,
      state: 'failed',
      skipReason: null,
      corrected: page.status !== 'failed',
      archive: null,
      notAdmitted: 'refused',
      links: null,
      failure: read.error,
    };
  }
  if (read.kind !== 'ok' || page.taskId === undefined || read.manifest.taskId !== page.taskId) {
    return { ...base, state: page.status, corrected: false, archive: null, notAdmitted: null, links: null };
  }
  return manifestAdmission(page, base, read.manifest, now);
}

/** A page whose manifest of its own task was read: the manifest's word. */
function manifestAdmission(page: PageReport, base: ReportedBase, m: Manifest, now: Date): PageAdmission {
  const decision = archiveFromManifest(m, { manifestKey: page.manifestKey ?? '', fallbackUrl: page.url, fallbackFinishedAt: page.finishedAt, now });
  const state = m.status === 'succeeded' && !isCancelled(m) ? 'captured' : 'failed';
  const linksArtifact = linksArtifactOf(m);
  return {
    ...base,
    state,
    skipReason: null,
    finalUrl: m.finalUrl ?? base.finalUrl,
    finishedAt: base.finishedAt ?? validDate(m.finishedAt) ?? null,
    corrected: state !== page.status,
    archive: decision.admit ? decision.archive : null,
    notAdmitted: decision.admit ? null : decision.reason,
    links: linksArtifact ? { bucket: linksArtifact.bucket, key: linksArtifact.key } : null,
  };
}

/** Verifies `read` is a manifest of `taskId`; the capturer's key could have been reused. */
export function checkManifestTask(read: ManifestRead, taskId: string): ManifestRead {
  if (read.kind === 'ok' && read.manifest.taskId !== taskId) {
    return { kind: 'invalid', error: `manifest belongs to task ${read.manifest.taskId}, not ${taskId}` };
  }
  return read;
}

/**
 * Why a page's manifest key may not be read, or null: it must be exactly
 * `<prefix><taskId>.result.json`, `prefix` being the dispatched one when known, else the one the
 * key itself implies.
 */
export function manifestKeyProblem(at: { taskId: string; manifestKey: string; prefix?: string }): string | null {
  const prefix = at.prefix ?? prefixOfManifestKey(at.manifestKey, at.taskId);
  if (prefix !== null && at.manifestKey === expectedManifestKey(prefix, at.taskId)) return null;
  return `manifest key ${JSON.stringify(at.manifestKey)} is not ${prefix === null ? '<prefix><taskId>.result.json' : JSON.stringify(expectedManifestKey(prefix, at.taskId))}`;
}

/**
 * Verifies a manifest of this task lies where the level's captures must (manifestKeyProblem), with
 * every artifact in `bucket` under the same prefix. Anything else is `refused`.
 */
export function checkPlacement(read: ManifestRead, at: { taskId: string; manifestKey: string; bucket: string; prefix?: string }): ManifestRead {
  if (read.kind !== 'ok') return read;
  const keyProblem = manifestKeyProblem(at);
  if (keyProblem !== null) return { kind: 'refused', error: keyProblem };
  const prefix = at.prefix ?? prefixOfManifestKey(at.manifestKey, at.taskId)!;
  const problem = artifactPlacementProblem(read.manifest, { bucket: at.bucket, prefix });
  return problem === null ? read : { kind: 'refused', error: problem };
}
