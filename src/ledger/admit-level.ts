// Admitting one reported level into the ledger (the fast path of "Filling the ledger").
//
// For every reported page that carries a task id: a capture_submissions row (task → organization,
// manifest key or error), failures included. Each manifest is read at exactly the reported key;
// where it disagrees with the report, the manifest wins. Succeeded captures with a WACZ become
// archives with their tuples, in the same transaction. The links of follow pages are read from
// their `links` artifacts, the rules pick candidates, and the rows that actually land become the
// next level, cut so the crawl never takes more than maxPages.
//
// Idempotent: everything is written in one transaction with ON CONFLICT, so a retried or
// repeated admission leaves the same rows, archives and tuples.
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Db } from '../db/connect.ts';
import {
  admitPage,
  checkManifestTask,
  checkPlacement,
  manifestKeyProblem,
  parseLinksArtifact,
  parseManifest,
  type ManifestRead,
  type PageAdmission,
} from '../domain/admission.ts';
import type { LevelReportBody, ManifestLink } from '../domain/contract.ts';
import { levelSlots, readsLinks } from '../domain/crawl.ts';
import { foreignTaskProblem, hostsToRecord } from '../domain/level-dispatch.ts';
import { LinkSelector, type FollowPageLinks } from '../domain/links.ts';
import { mapLimit } from '../domain/map-limit.ts';
import { rulesFromFixed } from '../domain/rules/index.ts';
import { replaceLevelDecisions, replaceLevelRefusals, replaceLevelSkipped } from '../store/decisions.ts';
import { checkParsedUrl, type AddressPolicy } from '../domain/address-policy.ts';
import { ERROR_TYPE_ADDRESS_REFUSED } from '../domain/contract.ts';
import { RefusalTallies } from '../domain/decisions.ts';
import { getCrawl, getLevelReport, markDepthReached, markReportAdmitted } from '../store/crawls.ts';
import {
  applyPageAdmissions,
  cutLevel,
  failUnreported,
  insertCandidates,
  levelHasPages,
  levelPages,
  pagesCut,
  pagesTaken,
  resetFrontier,
} from '../store/pages.ts';
import { getDispatch, recordHosts } from '../store/level-dispatches.ts';
import { foreignTaskIds } from '../store/task-owners.ts';
import { MAX_MANIFEST_BYTES, MAX_OBJECT_BYTES, type ObjectRead, type ObjectReader } from '../s3/object-reader.ts';
import { recordSubmissions, registerCaptures, type Registration } from './register.ts';

export interface AdmitDeps {
  db: Db;
  s3: S3Client;
  /** where manifests are read (the report carries keys only) */
  bucket: string;
  /** a lean signed-GET reader (src/s3/object-reader.ts); without it, reads go through the SDK client */
  reader?: ObjectReader;
  /** concurrent S3 reads (default DEFAULT_READ_CONCURRENCY) */
  readConcurrency?: number;
  log?: { warn(msg: string, meta?: Record<string, unknown>): void };
  /** the address policy links are held to (src/domain/address-policy.ts); without it, only the length limits */
  policy?: AddressPolicy;
}

export interface AdmitLevelInput {
  crawlId: string;
  depth: number;
  /**
   * Read links and plan the next level. False when re-admitting a level whose next level was
   * already dispatched: the ledger is corrected, the frontier is left alone.
   */
  expand: boolean;
}

export interface AdmitLevelResult {
  crawlId: string;
  depth: number;
  /** the report that was admitted (the newest stored for the level) */
  reportId: string;
  pages: number;
  captured: number;
  failed: number;
  skipped: number;
  /** reported pages the manifest corrected */
  corrected: number;
  /** archives this admission added (0 when repeated) */
  archivesCreated: number;
  /** archives of this level in the ledger, new or not */
  archives: number;
  /** pages whose manifest could not be read (left to reconcile) */
  manifestsUnreadable: number;
  /** dispatched pages the report did not mention, now failed */
  unreported: number;
  linksRead: number;
  /** pages waiting at depth + 1 */
  nextLevelPages: number;
  /** pages found for depth + 1 that maxPages left out */
  cutPages: number;
  /** pages the cap cut anywhere in the crawl so far, seeds included */
  cutSoFar: number;
  /** next-level pages a replaced report had introduced and this one no longer names */
  frontierRemoved: number;
  expanded: boolean;
  /** where the time went, in ms: reading manifests and links (links are chosen meanwhile), tallying refusals, writing */
  timings: { readMs: number; selectMs: number; writeMs: number };
}

/**
 * Rows per multi-row INSERT: Postgres takes at most 65,535 parameters in one statement, and an
 * archive row is 9 of them (a 10,000-page level in one INSERT was refused: "bind message has 4464
 * parameter formats but 0 parameters").
 */
export const ROWS_PER_INSERT = 2000;

/** S3 reads in flight while a level is admitted */
export const DEFAULT_READ_CONCURRENCY = 48;

/** Pages whose rows are written together while the level is still being read */
const WRITE_CHUNK = 250;

/** Candidates past the page budget still inserted (as cut rows); beyond them they are only counted. */
const CUT_ROWS_KEPT = 1000;

/** Next-level candidates inserted together while the level is still being read */
const CANDIDATE_CHUNK = 500;

export class AdmissionError extends Error {
  override name = 'AdmissionError';
}

export async function readObjectText(s3: S3Client, bucket: string, key: string, maxBytes = MAX_OBJECT_BYTES): Promise<ObjectRead> {
  try {
    const ac = new AbortController();
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: AbortSignal.any([ac.signal, AbortSignal.timeout(30_000)]) });
    if ((res.ContentLength ?? 0) > maxBytes) {
      ac.abort();
      return { kind: 'too-large', error: `S3 GET ${bucket}/${key}: object of ${res.ContentLength} bytes, larger than ${maxBytes}` };
    }
    return { kind: 'ok', text: (await res.Body?.transformToString('utf8')) ?? '' };
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number }; message?: string };
    if (e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) return { kind: 'missing' };
    return { kind: 'unreadable', error: `${e.name ?? 'Error'}: ${e.message ?? String(err)}` };
  }
}

/** Reads `<key>.result.json` at exactly the reported key. Never throws. */
export async function readManifest(s3: S3Client | ObjectReader, bucket: string, key: string): Promise<ManifestRead> {
  const r = 'read' in s3 ? await s3.read(bucket, key, MAX_MANIFEST_BYTES) : await readObjectText(s3, bucket, key, MAX_MANIFEST_BYTES);
  if (r.kind === 'too-large') return { kind: 'invalid', error: r.error };
  if (r.kind !== 'ok') return r;
  try {
    return { kind: 'ok', manifest: parseManifest(r.text) };
  } catch (err) {
    return { kind: 'invalid', error: (err as Error).message };
  }
}

export async function admitLevel(deps: AdmitDeps, input: AdmitLevelInput): Promise<AdmitLevelResult> {
  const { db, bucket } = deps;
  const source: S3Client | ObjectReader = deps.reader ?? deps.s3;
  const { crawlId, depth } = input;
  const concurrency = deps.readConcurrency ?? DEFAULT_READ_CONCURRENCY;
  const crawl = await getCrawl(db, crawlId);
  if (crawl === undefined) throw new AdmissionError(`crawl ${crawlId} does not exist`);
  const report = await getLevelReport(db, crawlId, depth);
  if (report === undefined) throw new AdmissionError(`crawl ${crawlId} has no report for level ${depth}`);
  const body = report.body as LevelReportBody;
  const now = new Date();

  // Only pages this level dispatched are admitted; a report naming anything else changes nothing.
  const dispatched = await levelPages(db, crawlId, depth);
  const actionOf = new Map(dispatched.map((p) => [p.url, p.action]));
  const reported = dedupeByUrl(body.pages).filter((p) => actionOf.has(p.url));
  // manifests and artifacts must lie under the prefix this level was dispatched with (a level
  // stored without a dispatch record — none is taken by the API — is held to its keys' own prefix)
  const prefix = (await getDispatch(db, crawlId, depth))?.artifactPrefix;

  const expand = input.expand && depth < crawl.max_depth;
  const readText = (bucket: string, key: string): Promise<ObjectRead> =>
    deps.reader !== undefined ? deps.reader.read(bucket, key) : readObjectText(deps.s3, bucket, key);

  // Pages whose task the report names more than once are written last, together, so the last
  // report of a task wins as it would in one INSERT; every other page's rows can go on their own.
  const taskUses = new Map<string, number>();
  for (const p of reported) if (p.taskId !== undefined) taskUses.set(p.taskId, (taskUses.get(p.taskId) ?? 0) + 1);
  const sharesTask = (p: ReportedPage): boolean => p.taskId !== undefined && taskUses.get(p.taskId)! > 1;

  return db.transaction().execute(async (trx) => {
    // a task id another crawl or level holds fails its page and is never written (the API refuses
    // such reports; this covers a level stored before that check, or two reports racing)
    const foreign = await foreignTaskIds(trx, crawlId, depth, [...taskUses.keys()]);
    // The rows of one page (its submission, archive and page state) need only that page's reads:
    // they are written in chunks of WRITE_CHUNK while the rest is still being read, one chunk at a
    // time on the transaction's connection, so Postgres works while S3 answers.
    const registrations: Registration[] = [];
    let writing: Promise<void> = Promise.resolve();
    const enqueueWrite = (write: () => Promise<void>): void => {
      writing = writing.then(write);
      // awaited after the reads; until then a failure must not count as unhandled
      writing.catch(() => undefined);
    };
    let pending: Admitted[] = [];
    const flush = (): void => {
      const rows = pending;
      pending = [];
      enqueueWrite(async () => {
        registrations.push(...(await writePageRows(trx, crawl, crawlId, depth, rows)));
      });
    };

    // Links are chosen while the level is still being read: each follow page's as soon as every
    // page before it in the report has been read (the choice depends on the order; LinkSelector).
    const policy = deps.policy;
    const selector = expand
      ? new LinkSelector(rulesFromFixed(crawl.rules), crawl.seeds, policy !== undefined ? { refuse: (u) => checkParsedUrl(policy, u) } : {})
      : null;
    // Only as many candidates as the page budget can still take (plus a margin, so the cap's cut
    // is recorded row by row) are inserted; the rest are counted as cut. The budget is known
    // before the reads (nothing admission writes changes what this level and those before took),
    // so candidates are inserted in chunks while the level is read, in the order they were chosen.
    const slots = selector !== null ? levelSlots(await pagesTaken(trx, crawlId, depth), crawl.max_pages) : 0;
    const insertLimit = slots + CUT_ROWS_KEPT;
    let inserted = 0;
    // A next level with no rows yet (a first admission) is exactly what lands now, in order, so
    // each chunk lands already cut at the budget and nothing needs resetting or recounting after.
    // Rows a replaced report introduced are reset and the level recut at the end instead.
    const nextLevelHadPages = selector !== null && (await levelHasPages(trx, crawlId, depth + 1));
    const landed = { kept: 0, cut: 0 };
    // what needs none of the reads goes first, while S3 answers the first manifests
    enqueueWrite(async () => {
      await recordHosts(trx, crawlId, hostsToRecord(body, new Set(dispatched.map((p) => p.host)), crawl.per_host_delay_ms, now));
      await markReportAdmitted(trx, crawlId, depth, report.report_id);
      await markDepthReached(trx, crawlId, depth);
    });
    const flushCandidates = (): void => {
      if (selector === null) return;
      const upto = Math.min(selector.candidatesSoFar.length, insertLimit);
      if (upto <= inserted) return;
      const rows = selector.candidatesSoFar.slice(inserted, upto);
      inserted = upto;
      enqueueWrite(async () => {
        const r = await insertCandidates(trx, crawlId, depth + 1, rows, nextLevelHadPages ? undefined : { placed: landed.kept + landed.cut, slots });
        landed.kept += r.kept;
        landed.cut += r.cut;
      });
    };
    /** per page: its links to choose from (null: none), undefined until it has been read */
    const readLinks: (FollowPageLinks | null | undefined)[] = new Array(reported.length);
    let nextToChoose = 0;
    const chooseInOrder = (i: number, page: FollowPageLinks | null): void => {
      readLinks[i] = page;
      for (; nextToChoose < readLinks.length && readLinks[nextToChoose] !== undefined; nextToChoose++) {
        const ready = readLinks[nextToChoose];
        readLinks[nextToChoose] = null;
        if (ready) selector?.add(ready);
      }
      if ((selector?.candidatesSoFar.length ?? 0) - inserted >= CANDIDATE_CHUNK) flushCandidates();
    };

    // One pass per page: its manifest, then (a captured follow page below maxDepth) its links.
    const t0 = performance.now();
    const perPage = await mapLimit(reported, concurrency, async (p, i) => {
      const read: ManifestRead =
        p.taskId !== undefined && foreign.has(p.taskId)
          ? { kind: 'refused', error: foreignTaskProblem(p.taskId) }
          : p.taskId !== undefined && p.manifestKey !== undefined
            ? await placedManifest(source, bucket, { taskId: p.taskId, manifestKey: p.manifestKey, ...(prefix !== undefined ? { prefix } : {}) })
            : { kind: 'absent' };
      const admission = withoutForeignTask(admitPage(p, read, now), foreign);
      if (!sharesTask(p)) {
        pending.push({ page: p, admission });
        if (pending.length >= WRITE_CHUNK) flush();
      }
      let links: ManifestLink[] | undefined;
      let linksError: string | undefined;
      if (expand && admission.state === 'captured' && admission.links !== null && readsLinks(actionOf.get(p.url) ?? 'capture', depth, crawl.max_depth)) {
        const r = await readText(admission.links.bucket, admission.links.key);
        if (r.kind !== 'ok') linksError = r.kind === 'missing' ? 'missing' : r.error;
        else {
          try {
            links = parseLinksArtifact(r.text).links;
          } catch (err) {
            linksError = (err as Error).message;
          }
        }
      }
      chooseInOrder(i, links !== undefined ? { url: admission.url, ...(admission.finalUrl !== null ? { finalUrl: admission.finalUrl } : {}), links } : null);
      return { read, admission, links, linksError };
    });
    pending.push(...reported.flatMap((p, i) => (sharesTask(p) ? [{ page: p, admission: perPage[i]!.admission }] : [])));
    flush();
    flushCandidates();
    const admissions: PageAdmission[] = perPage.map((x) => x.admission);
    const unreadable = perPage.filter((x) => x.read.kind === 'unreadable').length;
    if (unreadable > 0) deps.log?.warn('manifests unreadable, left to reconcile', { crawlId, depth, unreadable });
    const refusedPages = admissions.filter((a) => a.notAdmitted === 'refused');
    if (refusedPages.length > 0)
      deps.log?.warn('manifests outside the level prefix or bucket: pages failed, nothing registered', {
        crawlId,
        depth,
        refused: refusedPages.length,
        first: refusedPages[0]!.failure,
      });
    let linksRead = 0;
    for (const x of perPage) {
      if (x.links !== undefined) linksRead++;
      else if (x.linksError !== undefined) deps.log?.warn('links artifact unreadable', { crawlId, depth, url: x.admission.url, error: x.linksError });
    }
    const t1 = performance.now();
    const t2 = t1;
    const selection = selector?.result() ?? null;
    // pages the flow refused to fetch (the address they resolved to, a redirect hop, robots.txt's host)
    const refusals = new RefusalTallies();
    for (const x of perPage)
      if (x.read.kind === 'ok' && x.read.manifest.error?.type === ERROR_TYPE_ADDRESS_REFUSED)
        refusals.add(x.admission.url, new URL(x.admission.url).hostname, 'fetch-refused');
    // links the capturer itself left out past its own cap (manifest.dropped.links) are counted too
    for (const x of perPage) {
      const dropped = x.read.kind === 'ok' ? (x.read.manifest as { dropped?: { links?: unknown } }).dropped?.links : undefined;
      if (typeof dropped === 'number' && Number.isInteger(dropped) && dropped > 0)
        refusals.add(x.admission.url, new URL(x.admission.url).hostname, 'too-many-links', dropped);
    }
    for (const t of selection?.refused ?? []) refusals.addTally(t);
    const t3 = performance.now();

    await writing;
    const unreported = await failUnreported(trx, crawlId, depth);

    let nextLevelPages = 0;
    let cutPages = 0;
    let frontierRemoved = 0;
    if (selection !== null) {
      // the candidates inserted meanwhile; next-level pages a replaced report had introduced and
      // this one no longer names go (those it still names keep their place, ahead of new ones)
      const kept = selection.candidates.slice(0, insertLimit);
      let cut = landed;
      if (nextLevelHadPages) {
        frontierRemoved = await resetFrontier(
          trx,
          crawlId,
          depth + 1,
          kept.map((c) => c.url),
        );
        cut = await cutLevel(trx, crawlId, depth + 1, slots);
      }
      nextLevelPages = cut.kept;
      cutPages = cut.cut + (selection.candidates.length - kept.length);
      await replaceLevelDecisions(trx, crawlId, depth, selection.decisions);
      await replaceLevelSkipped(trx, crawlId, depth, selection.skipped);
    }
    await replaceLevelRefusals(trx, crawlId, depth, refusals.toArray());
    const cutSoFar = await pagesCut(trx, crawlId);
    const t4 = performance.now();
    return {
      crawlId,
      depth,
      reportId: report.report_id,
      pages: admissions.length,
      captured: admissions.filter((a) => a.state === 'captured').length,
      failed: admissions.filter((a) => a.state === 'failed').length + unreported,
      skipped: admissions.filter((a) => a.state === 'skipped').length,
      corrected: admissions.filter((a) => a.corrected).length,
      archivesCreated: registrations.filter((r) => r.created).length,
      archives: registrations.filter((r) => r.archiveId !== '').length,
      manifestsUnreadable: unreadable,
      unreported,
      linksRead,
      nextLevelPages,
      cutPages,
      cutSoFar,
      frontierRemoved,
      expanded: selection !== null,
      timings: { readMs: Math.round(t1 - t0), selectMs: Math.round(t3 - t2), writeMs: Math.round(t4 - t3) },
    };
  });
}

type ReportedPage = LevelReportBody['pages'][number];

interface Admitted {
  page: ReportedPage;
  admission: PageAdmission;
}

/**
 * One set of pages' own rows: a capture_submissions row per task (failures included; the last
 * report of a task wins), archives with their tuples for succeeded captures, and the pages' state.
 * In INSERTs of at most ROWS_PER_INSERT rows.
 */
async function writePageRows(
  trx: Parameters<typeof recordSubmissions>[0],
  crawl: { org_id: string; submitted_by: string },
  crawlId: string,
  depth: number,
  rows: Admitted[],
): Promise<Registration[]> {
  const submissions = lastPerTask(
    rows
      .filter(({ admission: a }) => a.taskId !== null)
      .map(({ page: p, admission: a }) => ({
        taskId: a.taskId!,
        orgId: crawl.org_id,
        submittedBy: crawl.submitted_by,
        crawlId,
        url: p.url,
        manifestKey: p.manifestKey ?? null,
        manifestError:
          (a.notAdmitted === 'refused' ? a.failure : undefined) ?? p.manifestError ?? (p.manifestKey === undefined ? 'no manifest key reported' : null),
      })),
    (s) => s.taskId,
  );
  const written = new Set<string>();
  for (const chunk of chunks(submissions, ROWS_PER_INSERT)) for (const t of await recordSubmissions(trx, chunk)) written.add(t);
  // a task whose submission another crawl took meanwhile is foreign after all
  const taken = new Set(submissions.filter((s) => !written.has(s.taskId)).map((s) => s.taskId));
  const admissions = rows.map((r) => withoutForeignTask(r.admission, taken));
  const captures = lastPerTask(
    admissions.filter((a) => a.archive !== null).map((a) => ({ archive: a.archive!, crawlId })),
    (c) => c.archive.taskId,
  );
  const registrations: Registration[] = [];
  for (const chunk of chunks(captures, ROWS_PER_INSERT)) registrations.push(...(await registerCaptures(trx, chunk)));
  await applyPageAdmissions(trx, crawlId, depth, admissions);
  return registrations;
}

/** A page whose task id is in `foreign` is failed, without that task id, archive or links. */
function withoutForeignTask(a: PageAdmission, foreign: ReadonlySet<string>): PageAdmission {
  if (a.taskId === null || !foreign.has(a.taskId)) return a;
  return { ...a, state: 'failed', skipReason: null, taskId: null, archive: null, links: null, notAdmitted: 'refused', failure: foreignTaskProblem(a.taskId) };
}

/** A page's manifest, read only when its key is where the level's must be, and refused when it
 * names artifacts anywhere else. Never throws. */
async function placedManifest(
  source: S3Client | ObjectReader,
  bucket: string,
  at: { taskId: string; manifestKey: string; prefix?: string },
): Promise<ManifestRead> {
  const keyProblem = manifestKeyProblem(at);
  if (keyProblem !== null) return { kind: 'refused', error: keyProblem };
  return checkPlacement(checkManifestTask(await readManifest(source, bucket, at.manifestKey), at.taskId), { ...at, bucket });
}

/** One item per key, the last one given for it (in the order of their first appearance). */
function lastPerTask<T>(items: readonly T[], key: (item: T) => string): T[] {
  return [...new Map(items.map((i) => [key(i), i])).values()];
}

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** The last report of a URL wins when a report names it twice. */
function dedupeByUrl<T extends { url: string }>(pages: readonly T[]): T[] {
  return [...new Map(pages.map((p) => [p.url, p])).values()];
}
