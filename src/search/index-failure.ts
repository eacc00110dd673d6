// Why an archive was not indexed, and whether that is for good. For good: the archive itself is
// the cause (not a WACZ, no or a malformed or an oversized pages/pages.jsonl, a page OpenSearch
// refuses as it is); the indexer marks the archive with the reason in archives.index_error and
// passes it over until a rebuild. For now: the object store or OpenSearch could not be asked, or was too busy
// (429, 5xx); the archive is tried again next time. Pure.
import { PagesJsonlError } from '../domain/pages-jsonl.ts';
import { ZipError } from './zip-range.ts';

export interface IndexFailure {
  error: Error;
  /** the archive is the cause: it is marked and not tried again until a rebuild */
  permanent: boolean;
}

/** The archive is the cause of this error (thrown while reading it). */
export class UnindexableError extends Error {
  override name = 'UnindexableError';
}

/** What reading an archive's pages threw, judged. An object the store does not have is for good too. */
export function readFailure(err: unknown): IndexFailure {
  const error = err instanceof Error ? err : new Error(String(err));
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const missing = error.name === 'NoSuchKey' || status === 404;
  const permanent = error instanceof UnindexableError || error instanceof ZipError || error instanceof PagesJsonlError || missing;
  return { error: missing ? new Error(`the WACZ is not in the store (${error.message})`) : error, permanent };
}

/** A bulk item OpenSearch answered with an error: 429 and 5xx may pass, anything else is the document. */
export function bulkItemFailure(position: number, status: number | undefined, error: { type?: string; reason?: string }): IndexFailure {
  const permanent = status !== undefined && status !== 429 && status < 500;
  return { error: new Error(`OpenSearch refused page ${position}: ${error.type}: ${error.reason}`), permanent };
}

const MAX_REASON = 1000;

/** A reason as archives.index_error holds it: no U+0000 (Postgres text cannot hold it), at most MAX_REASON characters. */
export function storedReason(message: string): string {
  const clean = message.replaceAll('\u0000', '\ufffd');
  return clean.length > MAX_REASON ? `${clean.slice(0, MAX_REASON - 1)}…` : clean;
}
