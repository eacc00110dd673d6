// The objects one capture writes, all beside its manifest: `<prefix><taskId>.<suffix>`. The capture
// flow names its keys with these suffixes (src/flow/capture.ts), and deleting an archive deletes
// exactly these keys of its own task: never a key its manifest names, since any capture worker may
// write a manifest naming another capture's WACZ as its screenshot.
import { prefixOfManifestKey } from './level-dispatch.ts';

/** Each object a capture may write, by what it holds. No suffix ends another after a dot, so a key splits one way only. */
export const CAPTURE_SUFFIX = {
  manifest: 'result.json',
  wacz: 'wacz',
  links: 'links.json',
  html: 'html',
  png: 'png',
  webp: 'webp',
  mhtml: 'mhtml',
} as const;

const SUFFIXES: ReadonlySet<string> = new Set(Object.values(CAPTURE_SUFFIX));

/** `<base>.<suffix>`: where a capture whose keys start with `base` (`<prefix><taskId>`) puts that object. */
export const captureObjectKey = (base: string, suffix: (typeof CAPTURE_SUFFIX)[keyof typeof CAPTURE_SUFFIX]): string => `${base}.${suffix}`;

/**
 * What a listing of the capture's objects asks for: `<prefix><taskId>.`, from its manifest key.
 * Null when the key is not `<prefix><taskId>.result.json` (nothing of it is listed then).
 */
export function captureListPrefix(manifestKey: string, taskId: string): string | null {
  const prefix = prefixOfManifestKey(manifestKey, taskId);
  return prefix === null ? null : `${prefix}${taskId}.`;
}

/**
 * True when `key`, listed under captureListPrefix, is one of that capture's own objects: the
 * listing also returns another task's whose id extends this one's after a dot (`<taskId>.x.wacz`).
 */
export function isCaptureObject(key: string, listPrefix: string): boolean {
  return key.startsWith(listPrefix) && SUFFIXES.has(key.slice(listPrefix.length));
}
