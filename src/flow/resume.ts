// A level dispatched again (the ledger heard no heartbeat: this flow, or one before it, died
// mid-level) must not capture twice what was already captured. A page's taskId is derived from
// the crawl, the level and its URL, so its manifest key is known before anything is done; a page
// whose manifest is already in the store is reported from it.
import { createHash } from 'node:crypto';
import type { Manifest, PageReport } from '../domain/contract.ts';
import { mapLimit } from '../domain/map-limit.ts';

/** A UUID (version 8, RFC 9562 "custom") from sha256(crawlId, depth, url): the same page of the
 * same level always gets the same taskId, so its artifacts land on the same keys. */
export function pageTaskId(crawlId: string, depth: number, url: string): string {
  const h = createHash('sha256').update(`${crawlId}\n${depth}\n${url}`, 'utf8').digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export function manifestKeyOf(prefix: string, taskId: string): string {
  return `${prefix}/${taskId}.result.json`;
}

/**
 * The page's report from a manifest an earlier attempt wrote, or undefined when the manifest is
 * not one this page can be reported from (another task or URL: written by something else).
 */
export function reportFromManifest(url: string, taskId: string, manifestKey: string, m: Manifest): PageReport | undefined {
  if (m.taskId !== taskId || m.url !== url) return undefined;
  return {
    url,
    status: m.status === 'succeeded' ? 'captured' : 'failed',
    taskId,
    manifestKey,
    ...(m.finalUrl !== undefined ? { finalUrl: m.finalUrl } : {}),
    ...(m.startedAt !== undefined ? { submittedAt: m.startedAt } : {}),
    ...(m.finishedAt !== undefined ? { finishedAt: m.finishedAt } : {}),
  };
}

/**
 * Per page index: the report of each page whose manifest an earlier attempt of this level already
 * wrote. A store that cannot read, or a manifest that cannot be read, means "capture it again".
 */
export async function earlierCaptures(
  d: { crawlId: string; depth: number; pages: { url: string }[] },
  prefix: string,
  store: { get?(key: string): Promise<Buffer | undefined> },
  log: (line: string) => void,
): Promise<Map<number, PageReport>> {
  const found = new Map<number, PageReport>();
  if (store.get === undefined) return found;
  await mapLimit(d.pages, 16, async (page, i) => {
    const taskId = pageTaskId(d.crawlId, d.depth, page.url);
    const key = manifestKeyOf(prefix, taskId);
    try {
      const bytes = await store.get!(key);
      if (bytes === undefined) return;
      const report = reportFromManifest(page.url, taskId, key, JSON.parse(bytes.toString('utf8')) as Manifest);
      if (report !== undefined) found.set(i, report);
    } catch (err) {
      log(`resume ${page.url}: ${key} unreadable (${(err as Error).message}); capturing it again`);
    }
  });
  if (found.size > 0) log(`level ${d.crawlId}/${d.depth}: ${found.size} of ${d.pages.length} pages already captured by an earlier attempt; reported from their manifests`);
  return found;
}
