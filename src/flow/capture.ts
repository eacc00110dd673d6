// One capture: visit the page in the browser (the part the host feels, paced by the level runner),
// then package what came back — the WACZ of every exchange, the rendered html, png, webp, mhtml and
// links — and write the artifacts and, last, the manifest `<prefix>/<taskId>.result.json` next to
// them. A manifest never names an object that was not written first.
import { createHash } from 'node:crypto';
import { CAPTURE_SUFFIX, captureObjectKey } from '../domain/capture-objects.ts';
import type { CaptureFormat } from '../domain/contract.ts';
import { ERROR_TYPE_CANCELLED, type LinksArtifact, type Manifest, type ManifestArtifact } from '../domain/contract.ts';
import type { QaAttempt } from '../domain/qa.ts';
import type { HttpExchange } from '../domain/wacz/warc.ts';
import type { StoredPayload } from '../domain/wacz/dedup.ts';
import { packWacz, type Provenance, type WaczSigner } from '../domain/wacz/write.ts';
import type { CaptureBrowser } from './browser/launch.ts';
import { capturePage, type PageCapture, type PageCaptureFailure, type PageCaptureOptions } from './browser/page-capture.ts';
import type { RecorderLimits } from './browser/recorder.ts';
import { headerValue, headerValues } from './fetch.ts';
import type { Fetcher } from './fetcher.ts';
import { headerNoArchive, isHtml } from './html.ts';
import type { ArtifactStore } from './store.ts';

export const ERROR_TYPES = {
  cancelled: ERROR_TYPE_CANCELLED,
  network: 'ERROR_TYPE_NETWORK',
  httpStatus: 'ERROR_TYPE_HTTP_STATUS',
  contentType: 'ERROR_TYPE_CONTENT_TYPE',
  redirects: 'ERROR_TYPE_TOO_MANY_REDIRECTS',
  tooLarge: 'ERROR_TYPE_TOO_LARGE',
  addressRefused: 'ERROR_TYPE_ADDRESS_REFUSED',
  injected: 'ERROR_TYPE_INJECTED',
} as const;

/** What visiting the page came to, before anything is packaged. `hostDoneAt`: when the host's part ended (ms). */
export type Visit =
  ({ kind: 'rendered' } & PageCapture & { hostDoneAt: number }) | { kind: 'failed'; errorType: string; message: string; finalUrl?: string; hostDoneAt: number };

export interface VisitOptions {
  userAgent: string;
  /** every request of the capture goes through it (the address policy's) */
  fetcher: Fetcher;
  formats: readonly CaptureFormat[];
  /** the browser lingering on the page after load */
  extraMs: number;
  /** tear the capture down after this long */
  deadlineMs: number;
  /** fail it on purpose (test knob) once the page has loaded */
  injectFailure: boolean;
  limits?: RecorderLimits;
  /** a png of the viewport as the page was read, for the quality check */
  liveShot?: boolean;
  /** in-page behaviors after load (absent: none) */
  behaviors?: PageCaptureOptions['behaviors'];
  /** told the moment the host's part is over, before rendering and teardown */
  onHostDone?: (hostDoneAt: number) => void;
  /** the capture given up: the visit is torn down */
  signal?: AbortSignal;
}

/** The document the browser loaded, judged as the plain fetch used to: an HTTP error or a non-HTML body fails the page. */
function judgeDocument(main: HttpExchange, finalUrl: string, injectFailure: boolean): PageCaptureFailure | undefined {
  const status = main.response.status;
  if (status >= 400) return { kind: 'judged', errorType: ERROR_TYPES.httpStatus, message: `${finalUrl} answered HTTP ${status}`, finalUrl };
  const contentType = headerValue(main.response.headers, 'content-type');
  if (!isHtml(contentType))
    return { kind: 'judged', errorType: ERROR_TYPES.contentType, message: `${finalUrl} is ${contentType ?? 'without a Content-Type'}, not HTML`, finalUrl };
  if (injectFailure) return { kind: 'judged', errorType: ERROR_TYPES.injected, message: 'capture failed on purpose (test knob "fail")', finalUrl };
  return undefined;
}

function failureType(f: PageCaptureFailure): string {
  switch (f.kind) {
    case 'cancelled':
      return ERROR_TYPES.cancelled;
    case 'judged':
      return f.errorType;
    case 'main':
      return f.failure.kind === 'refused' ? ERROR_TYPES.addressRefused : f.failure.kind === 'too-large' ? ERROR_TYPES.tooLarge : ERROR_TYPES.network;
    case 'navigation':
      if (f.message.includes('ERR_TOO_MANY_REDIRECTS')) return ERROR_TYPES.redirects;
      // Chromium hands what it cannot render to the download manager (downloads are refused)
      if (f.message.includes('Download is starting')) return ERROR_TYPES.contentType;
      return ERROR_TYPES.network;
  }
}

/** Loads the page in the browser, lingers, reads and renders it; the deadline covers all of it. */
export async function visitPage(browser: CaptureBrowser, url: string, opts: VisitOptions): Promise<Visit> {
  const r = await capturePage(
    browser,
    url,
    {
      userAgent: opts.userAgent,
      fetcher: opts.fetcher,
      formats: opts.formats,
      extraMs: opts.extraMs,
      deadlineMs: opts.deadlineMs,
      ...(opts.limits ? { limits: opts.limits } : {}),
      ...(opts.behaviors ? { behaviors: opts.behaviors } : {}),
      ...(opts.liveShot === true ? { liveShot: true } : {}),
      ...(opts.onHostDone ? { onHostDone: opts.onHostDone } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    },
    (main, finalUrl) => judgeDocument(main, finalUrl, opts.injectFailure),
  );
  if (r.ok) {
    const { ok: _ok, ...capture } = r;
    return { kind: 'rendered', ...capture };
  }
  const message = r.kind === 'main' ? r.failure.message : r.message;
  return { kind: 'failed', errorType: failureType(r), message, hostDoneAt: r.hostDoneAt, ...(r.finalUrl !== undefined ? { finalUrl: r.finalUrl } : {}) };
}

export interface PackageInput {
  taskId: string;
  url: string;
  follow: boolean;
  formats: CaptureFormat[];
  /** keys are `${prefix}/${taskId}.<ext>` */
  prefix: string;
  software: string;
  startedAt: Date;
  finishedAt: Date;
  signer?: WaczSigner;
  userAgent: string;
  /** for the WARC's warcinfo: browser version, worker, crawl settings, robots decision (the user agent is userAgent's) */
  provenance?: Omit<Provenance, 'userAgent'>;
  /** the quality check's attempts, the kept one last */
  qa?: QaAttempt[];
  /** payloads earlier pages of the crawl stored: responses with one are written as revisits */
  known?: readonly StoredPayload[];
}

export interface StoredObject {
  key: string;
  body: Buffer;
  contentType: string;
  format?: CaptureFormat;
}

export interface Packaged {
  manifest: Manifest;
  manifestKey: string;
  /** artifacts first; the manifest is written after them */
  objects: StoredObject[];
  finalUrl?: string;
  /** visible text and title, for tests and logs */
  title?: string;
  /** what the WACZ's dedup came to (absent without a WACZ) */
  dedup?: { stored: StoredPayload[]; revisited: string[] };
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

const RENDERED: { format: 'html' | 'png' | 'webp' | 'mhtml'; contentType: string }[] = [
  { format: 'html', contentType: 'text/html; charset=utf-8' },
  { format: 'png', contentType: 'image/png' },
  { format: 'webp', contentType: 'image/webp' },
  { format: 'mhtml', contentType: 'multipart/related' },
];

type Rendered = Extract<Visit, { kind: 'rendered' }>;

/** Why the page's text is not kept, when it is not (the page's own noarchive or its X-Robots-Tag). */
function withheldOf(visit: Rendered, userAgent: string): 'no-archive' | undefined {
  const tag = headerValues(visit.main.response.headers, 'x-robots-tag');
  return visit.page.noArchive || headerNoArchive(tag, userAgent.split('/')[0]!) ? 'no-archive' : undefined;
}

/** The page's WACZ, and what its dedup came to. */
async function waczObject(visit: Rendered, input: PackageInput, key: string, withheld: 'no-archive' | undefined) {
  const { page } = visit;
  const packed = await packWacz({
    exchanges: visit.exchanges,
    pages: [{ url: input.url, title: page.title, text: withheld ? '' : page.text, ts: input.startedAt, ...(withheld ? { textWithheld: withheld } : {}) }],
    software: input.software,
    provenance: { ...input.provenance, userAgent: input.userAgent },
    created: input.finishedAt,
    ...(page.title !== undefined ? { title: page.title } : {}),
    ...(input.signer !== undefined ? { signer: input.signer } : {}),
    dedup: { known: input.known ?? [], archiveKey: key },
  });
  const object: StoredObject = { key, body: packed.wacz, contentType: 'application/zip', format: 'wacz' };
  return { object, requires: packed.requires, dedup: { stored: packed.stored, revisited: packed.revisited } };
}

/** The rendered artifacts asked for, and the links when the page is followed or links were asked for. */
function renderedObjects(visit: Rendered, input: PackageInput, base: string): StoredObject[] {
  const objects: StoredObject[] = [];
  for (const r of RENDERED) {
    const body = visit.artifacts[r.format];
    if (input.formats.includes(r.format) && body !== undefined)
      objects.push({ key: captureObjectKey(base, CAPTURE_SUFFIX[r.format]), body, contentType: r.contentType, format: r.format });
  }
  if (input.follow || input.formats.includes('links')) {
    const links: LinksArtifact = { url: input.url, finalUrl: visit.finalUrl, links: visit.page.links };
    objects.push({
      key: captureObjectKey(base, CAPTURE_SUFFIX.links),
      body: Buffer.from(JSON.stringify(links)),
      contentType: 'application/json',
      format: 'links',
    });
  }
  return objects;
}

/** What a succeeded manifest says beyond its artifacts: title, withheld text, what was dropped or cut. */
function succeeded(manifest: Manifest, visit: Rendered, objects: StoredObject[], bucket: string, withheld: 'no-archive' | undefined): void {
  const { page } = visit;
  manifest.status = 'succeeded';
  manifest.finalUrl = visit.finalUrl;
  if (page.title !== undefined && page.title !== '') manifest.title = page.title;
  manifest.artifacts = objects.map((o): ManifestArtifact => ({ format: o.format!, bucket, key: o.key, sha256: sha256(o.body), size: o.body.length }));
  if (withheld) manifest.documentWithheld = withheld;
  if (visit.dropped > 0 || visit.refused > 0 || page.linksDropped > 0)
    manifest.dropped = { resources: visit.dropped, refused: visit.refused, links: page.linksDropped };
  if (page.truncated !== undefined) manifest.truncated = page.truncated;
}

function failedPackage(visit: Extract<Visit, { kind: 'failed' }>, manifest: Manifest, manifestKey: string): Packaged {
  if (visit.finalUrl !== undefined) manifest.finalUrl = visit.finalUrl;
  manifest.error = { type: visit.errorType, message: visit.message };
  return { manifest, manifestKey, objects: [], ...(visit.finalUrl !== undefined ? { finalUrl: visit.finalUrl } : {}) };
}

/** Turns a visit into the artifacts and the manifest that describes them. */
export async function packageCapture(visit: Visit, input: PackageInput, bucket: string): Promise<Packaged> {
  const base = `${input.prefix}/${input.taskId}`;
  const manifestKey = captureObjectKey(base, CAPTURE_SUFFIX.manifest);
  const manifest: Manifest = {
    taskId: input.taskId,
    url: input.url,
    status: 'failed',
    artifacts: [],
    software: input.software,
    startedAt: input.startedAt.toISOString(),
    finishedAt: input.finishedAt.toISOString(),
    ...(input.qa !== undefined && input.qa.length > 0 ? { qa: input.qa } : {}),
  };
  if (visit.kind === 'failed') return failedPackage(visit, manifest, manifestKey);

  const withheld = withheldOf(visit, input.userAgent);
  const objects: StoredObject[] = [];
  let dedup: Packaged['dedup'];
  if (input.formats.includes('wacz')) {
    const wacz = await waczObject(visit, input, captureObjectKey(base, CAPTURE_SUFFIX.wacz), withheld);
    objects.push(wacz.object);
    if (wacz.requires.length > 0) manifest.requires = wacz.requires;
    dedup = wacz.dedup;
  }
  objects.push(...renderedObjects(visit, input, base));
  succeeded(manifest, visit, objects, bucket, withheld);
  const { title } = visit.page;
  return { manifest, manifestKey, objects, finalUrl: visit.finalUrl, ...(title !== undefined ? { title } : {}), ...(dedup !== undefined ? { dedup } : {}) };
}

/**
 * Writes the artifacts, then the manifest, which names the version the store gave each artifact;
 * answers the manifest's own version. Throws naming the key that could not be written.
 */
export async function writeCapture(p: Packaged, store: ArtifactStore, opts: { skipManifest?: boolean } = {}): Promise<{ manifestVersion?: string }> {
  for (const o of p.objects) {
    try {
      const { versionId } = await store.put(o.key, o.body, o.contentType);
      const listed = p.manifest.artifacts.find((a) => a.key === o.key);
      if (listed !== undefined && versionId !== undefined) listed.versionId = versionId;
    } catch (err) {
      throw new Error(`could not write ${o.key}: ${(err as Error).message}`);
    }
  }
  if (opts.skipManifest) return {};
  try {
    const { versionId } = await store.put(p.manifestKey, Buffer.from(JSON.stringify(p.manifest, null, 2)), 'application/json');
    return versionId !== undefined ? { manifestVersion: versionId } : {};
  } catch (err) {
    throw new Error(`could not write ${p.manifestKey}: ${(err as Error).message}`);
  }
}
