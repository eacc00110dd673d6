// A page's taskId is derived from the crawl, the level and its URL: a capture tried again (its
// worker died) writes the same keys, and the report can name its manifest without asking anyone.
import { createHash } from 'node:crypto';
import { CAPTURE_SUFFIX, captureObjectKey } from '../domain/capture-objects.ts';

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
  return captureObjectKey(`${prefix}/${taskId}`, CAPTURE_SUFFIX.manifest);
}
