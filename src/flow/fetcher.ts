// The one way the capture flow reaches the web. Every request a capture makes — the page, each
// redirect hop, robots.txt and every subresource the browser asks for — is sent by a Fetcher, and
// the only Fetcher the flow builds is the guarded one (src/flow/fetch.ts: createGuardedFetcher),
// which applies the address policy (src/domain/address-policy.ts) to the address it actually
// connects to. Nothing else in src/flow opens a socket to a crawled site.
import type { ByteBudget } from '../domain/byte-budget.ts';
import type { HeaderList, HttpExchange } from '../domain/wacz/warc.ts';

export interface OutgoingRequest {
  /** absolute http(s) URL; a fragment is dropped */
  url: string;
  method: string;
  /** as the browser (or the robots fetch) would send them; Host is set from the URL */
  headers: HeaderList;
  body?: Buffer;
}

export interface FetchLimits {
  signal?: AbortSignal;
  /** refuse bodies larger than this */
  maxBytes?: number;
  /**
   * Shared with the caller's other fetches in flight (a page's subresources): every body byte is
   * taken from it as it is read, and a body that would cross it fails as too large. A failed
   * exchange gives its bytes back; a delivered body's bytes stay taken, for the caller to give
   * back if it does not keep the body.
   */
  budget?: ByteBudget;
  /** give up when no answer came within this long */
  timeoutMs?: number;
}

/**
 * Sends one request, follows nothing, and resolves with the exchange exactly as it went over the
 * wire (status line, raw headers, body bytes as received). Rejects with a FetchError; its type is
 * 'refused' when the address policy refused the URL or the address it resolved to — in that case
 * not one byte was sent.
 */
export type Fetcher = (req: OutgoingRequest, limits?: FetchLimits) => Promise<HttpExchange>;
