// What replay agrees to load. `/wacz/<key>?<signature>` is checked by checkSource before the proxy
// forwards it; the app's own page (`/?source=…`) by checkAppQuery before ReplayWeb.page is served,
// so a source naming another host, or any other of ReplayWeb.page's parameters (config, swName,
// adblockUrl, customColl, state…), is refused before the browser runs a line of it and fetches
// anything.
import { extendedEncodeURIComponent } from '@smithy/core/protocols';

/** The presigned GET's query parameters (versionId: the archive's own version); anything else in the query is dropped. */
const SIGNATURE_PARAMS = new Set([
  'versionId',
  'X-Amz-Algorithm',
  'X-Amz-Content-Sha256',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-SignedHeaders',
  'X-Amz-Signature',
  'X-Amz-Security-Token',
  'x-id',
]);

export type SourceCheck = { ok: true; key: string; query: string } | { ok: false; status: 400 | 403 | 404; error: string };

/**
 * What `/wacz/<raw path>?<raw query>` asks for: a `.wacz` key (segments percent-decoded, no dot
 * segments) and the signature parameters, re-encoded as the presigner encodes them.
 */
export function checkSource(rawPath: string, rawQuery: string): SourceCheck {
  const key = checkKey(rawPath);
  if (!key.ok) return key;
  const params = [...new URLSearchParams(rawQuery)].filter(([k]) => SIGNATURE_PARAMS.has(k));
  if (!params.some(([k]) => k === 'X-Amz-Signature')) {
    return { ok: false, status: 403, error: 'a signed source is required: open the archive from the picker (POST /api/archives/:id/url signs it)' };
  }
  return { ok: true, key: key.key, query: params.map(([k, v]) => `${extendedEncodeURIComponent(k)}=${extendedEncodeURIComponent(v)}`).join('&') };
}

/** A `.wacz` key from its raw path: segments percent-decoded, none empty and no dot segments. */
function checkKey(rawPath: string): { ok: true; key: string } | { ok: false; status: 400 | 404; error: string } {
  let key: string;
  try {
    key = rawPath.split('/').map(decodeURIComponent).join('/');
  } catch {
    return { ok: false, status: 400, error: 'the key is not valid percent-encoding' };
  }
  if (key === '' || key.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) return { ok: false, status: 404, error: 'not found' };
  if (!key.endsWith('.wacz')) return { ok: false, status: 404, error: 'replay serves .wacz archives only' };
  return { ok: true, key };
}

export type AppQueryCheck = { ok: true; source: string | null; key: string | null } | { ok: false; status: 400; error: string };

const WACZ_PREFIX = '/wacz/';
export const COLLECTION_PREFIX = '/collection/';
/** ReplayWeb.page picks its loader by the source's last path segment: `.json` is a multi-WACZ collection */
export const COLLECTION_NAME = 'collection.json';
/** an archive and the ones it requires: the URL stays below Node's 16 KiB header limit */
export const MAX_COLLECTION_SOURCES = 16;

export type CollectionCheck = { ok: true; sources: { key: string; source: string }[] } | { ok: false; status: 400 | 403 | 404; error: string };

/**
 * `/collection/<source>/…/collection.json`: an archive and those it requires, each path segment one
 * percent-encoded `/wacz/<key>?<signature>` source, checked as the proxy checks it (a signed
 * `.wacz` of replay's own). Replay answers it with a multi-WACZ package naming those sources only.
 */
export function checkCollection(rawPath: string): CollectionCheck {
  const segs = rawPath.split('/');
  if (segs.pop() !== COLLECTION_NAME || segs.length === 0)
    return { ok: false, status: 404, error: `a collection is ${COLLECTION_PREFIX}<source>/…/${COLLECTION_NAME}` };
  if (segs.length > MAX_COLLECTION_SOURCES) return { ok: false, status: 400, error: `a collection holds at most ${MAX_COLLECTION_SOURCES} sources` };
  const sources: { key: string; source: string }[] = [];
  for (const seg of segs) {
    let source: string;
    try {
      source = decodeURIComponent(seg);
    } catch {
      return { ok: false, status: 400, error: 'a collection source is not valid percent-encoding' };
    }
    if (!source.startsWith(WACZ_PREFIX) || /[#\\]/.test(source))
      return { ok: false, status: 400, error: "a collection holds only replay's own /wacz/ sources" };
    const q = source.indexOf('?');
    const checked = checkSource(source.slice(WACZ_PREFIX.length, q === -1 ? undefined : q), q === -1 ? '' : source.slice(q + 1));
    if (!checked.ok) return checked;
    sources.push({ key: checked.key, source });
  }
  return { ok: true, sources };
}

/**
 * The query of a request for the app itself: nothing (ReplayWeb.page's list of what this browser
 * has open), or exactly one `source`, a path of this server's /wacz/ proxy naming a `.wacz` key, or
 * a /collection/ of such sources (checkCollection).
 * Its signature is the proxy's to check (it refuses an unsigned one before reaching the bucket).
 */
export function checkAppQuery(rawQuery: string): AppQueryCheck {
  const params = [...new URLSearchParams(rawQuery)];
  const other = params.find(([name]) => name !== 'source');
  if (other !== undefined) return { ok: false, status: 400, error: `replay takes one parameter, source; ${JSON.stringify(other[0])} is not accepted` };
  if (params.length === 0) return { ok: true, source: null, key: null };
  const [first, ...more] = params;
  if (first === undefined || more.length > 0) return { ok: false, status: 400, error: 'replay takes exactly one source' };
  const source = first[1];
  if (source.startsWith(COLLECTION_PREFIX) && !source.includes('?') && !/[#\\]/.test(source)) {
    const c = checkCollection(source.slice(COLLECTION_PREFIX.length));
    // the collection's origin is its first archive's, the one opened (the rest are what it requires)
    return c.ok ? { ok: true, source, key: c.sources[0]!.key } : { ok: false, status: 400, error: `the collection is refused: ${c.error}` };
  }
  // '#' and '\\' would let a browser read the path differently from this check
  if (!source.startsWith(WACZ_PREFIX) || /[#\\]/.test(source)) {
    return { ok: false, status: 400, error: 'replay opens only its own /wacz/ sources, as the picker links them: another host or path is refused' };
  }
  const q = source.indexOf('?');
  const key = checkKey(source.slice(WACZ_PREFIX.length, q === -1 ? undefined : q));
  return key.ok ? { ok: true, source, key: key.key } : { ok: false, status: 400, error: `the source is refused: ${key.error}` };
}
