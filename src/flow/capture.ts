// One capture: visit the page (the part the host feels, paced by the level runner), then package
// what came back — WACZ, raw HTML, links — and write the artifacts and, last, the manifest
// `<prefix>/<taskId>.result.json` next to them. A manifest never names an object that was not
// written first.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CaptureFormat } from '../config/env.ts';
import { ERROR_TYPE_CANCELLED, type LinksArtifact, type Manifest, type ManifestArtifact } from '../domain/contract.ts';
import { writeWacz, type WaczSigner } from '../domain/wacz/write.ts';
import { fetchFollowing, FetchError, headerValue, headerValues, type FetchResult } from './fetch.ts';
import { decodeHtml, extractPage, headerNoArchive, isHtml } from './html.ts';
import type { ArtifactStore } from './store.ts';

export const ERROR_TYPES = {
  cancelled: ERROR_TYPE_CANCELLED,
  network: 'ERROR_TYPE_NETWORK',
  httpStatus: 'ERROR_TYPE_HTTP_STATUS',
  contentType: 'ERROR_TYPE_CONTENT_TYPE',
  redirects: 'ERROR_TYPE_TOO_MANY_REDIRECTS',
  tooLarge: 'ERROR_TYPE_TOO_LARGE',
  unsupportedFormat: 'ERROR_TYPE_UNSUPPORTED_FORMAT',
  injected: 'ERROR_TYPE_INJECTED',
} as const;

/** What visiting the page came to, before anything is packaged. */
export type Visit = { kind: 'fetched'; fetch: FetchResult } | { kind: 'failed'; errorType: string; message: string; finalUrl?: string };

export interface VisitOptions {
  userAgent: string;
  /** the browser lingering on the page after load */
  extraMs: number;
  /** tear the capture down after this long */
  deadlineMs: number;
  /** fail it on purpose (test knob) once the page has been visited */
  injectFailure: boolean;
}

/** Fetches the page (redirects followed) and lingers; the deadline covers both. */
export async function visitPage(url: string, opts: VisitOptions): Promise<Visit> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error('deadline')), opts.deadlineMs);
  try {
    let fetched: FetchResult;
    try {
      fetched = await fetchFollowing(url, { userAgent: opts.userAgent, signal: ac.signal });
    } catch (err) {
      if (ac.signal.aborted) return { kind: 'failed', errorType: ERROR_TYPES.cancelled, message: `capture exceeded its deadline of ${opts.deadlineMs} ms and was torn down` };
      const e = err as Error;
      const type = e instanceof FetchError ? ({ redirects: ERROR_TYPES.redirects, 'too-large': ERROR_TYPES.tooLarge, scheme: ERROR_TYPES.network, network: ERROR_TYPES.network, aborted: ERROR_TYPES.cancelled } as const)[e.type] : ERROR_TYPES.network;
      return { kind: 'failed', errorType: type, message: e.message };
    }
    if (opts.extraMs > 0) {
      try {
        await sleep(opts.extraMs, undefined, { signal: ac.signal });
      } catch {
        return { kind: 'failed', errorType: ERROR_TYPES.cancelled, message: `capture exceeded its deadline of ${opts.deadlineMs} ms and was torn down`, finalUrl: fetched.finalUrl };
      }
    }
    if (opts.injectFailure) return { kind: 'failed', errorType: ERROR_TYPES.injected, message: 'capture failed on purpose (test knob "fail")', finalUrl: fetched.finalUrl };
    return { kind: 'fetched', fetch: fetched };
  } finally {
    clearTimeout(timer);
  }
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
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Turns a visit into the artifacts and the manifest that describes them. */
export async function packageCapture(visit: Visit, input: PackageInput, bucket: string): Promise<Packaged> {
  const base = `${input.prefix}/${input.taskId}`;
  const manifestKey = `${base}.result.json`;
  const manifest: Manifest = {
    taskId: input.taskId,
    url: input.url,
    status: 'failed',
    artifacts: [],
    software: input.software,
    startedAt: input.startedAt.toISOString(),
    finishedAt: input.finishedAt.toISOString(),
  };
  const failed = (type: string, message: string, finalUrl?: string): Packaged => {
    if (finalUrl !== undefined) manifest.finalUrl = finalUrl;
    manifest.error = { type, message };
    return { manifest, manifestKey, objects: [], ...(finalUrl !== undefined ? { finalUrl } : {}) };
  };
  if (visit.kind === 'failed') return failed(visit.errorType, visit.message, visit.finalUrl);

  const { final, finalUrl, hops } = visit.fetch;
  const status = final.response.status;
  const contentType = headerValue(final.response.headers, 'content-type');
  if (status >= 400) return failed(ERROR_TYPES.httpStatus, `${finalUrl} answered HTTP ${status}`, finalUrl);
  if (!isHtml(contentType)) return failed(ERROR_TYPES.contentType, `${finalUrl} is ${contentType ?? 'without a Content-Type'}, not HTML`, finalUrl);

  const page = extractPage(decodeHtml(final.response.body, contentType), finalUrl);
  const withheld = page.noArchive || headerNoArchive(headerValues(final.response.headers, 'x-robots-tag'), input.userAgent.split('/')[0]!) ? ('no-archive' as const) : undefined;

  const objects: StoredObject[] = [];
  if (input.formats.includes('wacz')) {
    const wacz = await writeWacz({
      exchanges: hops,
      pages: [{ url: input.url, title: page.title, text: withheld ? '' : page.text, ts: input.startedAt, ...(withheld ? { textWithheld: withheld } : {}) }],
      software: input.software,
      created: input.finishedAt,
      ...(page.title !== undefined ? { title: page.title } : {}),
      ...(input.signer !== undefined ? { signer: input.signer } : {}),
    });
    objects.push({ key: `${base}.wacz`, body: wacz, contentType: 'application/zip', format: 'wacz' });
  }
  if (input.formats.includes('html')) objects.push({ key: `${base}.html`, body: final.response.body, contentType: contentType ?? 'text/html', format: 'html' });
  if (input.follow || input.formats.includes('links')) {
    const links: LinksArtifact = { url: input.url, finalUrl, links: page.links };
    objects.push({ key: `${base}.links.json`, body: Buffer.from(JSON.stringify(links)), contentType: 'application/json', format: 'links' });
  }
  if (!objects.some((o) => o.format === 'wacz' || o.format === 'html')) {
    return failed(ERROR_TYPES.unsupportedFormat, `none of the formats ${input.formats.join(',')} can be produced by the reference flow (it writes wacz, html and links)`, finalUrl);
  }
  manifest.status = 'succeeded';
  manifest.finalUrl = finalUrl;
  manifest.artifacts = objects.map((o): ManifestArtifact => ({ format: o.format!, bucket, key: o.key, sha256: sha256(o.body), size: o.body.length }));
  if (withheld) manifest.documentWithheld = withheld;
  return { manifest, manifestKey, objects, finalUrl, ...(page.title !== undefined ? { title: page.title } : {}) };
}

/** Writes the artifacts, then the manifest. Throws naming the key that could not be written. */
export async function writeCapture(p: Packaged, store: ArtifactStore, opts: { skipManifest?: boolean } = {}): Promise<void> {
  for (const o of p.objects) {
    try {
      await store.put(o.key, o.body, o.contentType);
    } catch (err) {
      throw new Error(`could not write ${o.key}: ${(err as Error).message}`);
    }
  }
  if (opts.skipManifest) return;
  try {
    await store.put(p.manifestKey, Buffer.from(JSON.stringify(p.manifest, null, 2)), 'application/json');
  } catch (err) {
    throw new Error(`could not write ${p.manifestKey}: ${(err as Error).message}`);
  }
}

