// Answers every request a capture's page makes: the injected Fetcher (the address policy's) sends
// it, the exchange is recorded for the WARC exactly as it went over the wire, and the browser gets
// the same response through route.fulfill. Redirects: Playwright does not route the request a
// fulfilled 3xx leads to (it would go to the network, i.e. to the refusing proxy), so each hop is
// fetched here, through the policy, and recorded. A subresource's chain is followed here and the
// browser gets the last response; the main document's 3xx is recorded and its navigation ended (204),
// and page-capture navigates to the Location (so the document has its real address). What the policy
// refuses is aborted and counted; what is over the page's resource or byte budget is aborted, not
// recorded, and counted. After stop() (the host's part of the capture is over) everything is
// aborted, so nothing reaches the host off its clock.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Request, Route } from 'playwright-core';
import { ByteBudget } from '../../domain/byte-budget.ts';
import type { HeaderList, HttpExchange } from '../../domain/wacz/warc.ts';
import type { Fetcher, OutgoingRequest } from '../fetcher.ts';

export interface RecorderLimits {
  /** requests recorded per page; the ones after are aborted */
  maxResources: number;
  /** payload bytes per page, recorded and being read at once; a response that would cross it is aborted */
  maxBytes: number;
}

export const DEFAULT_RECORDER_LIMITS: RecorderLimits = { maxResources: 2000, maxBytes: 100 * 1024 * 1024 };

/** Why the main document could not be had (the page fails with it). */
export interface MainFailure {
  kind: 'refused' | 'too-large' | 'network';
  message: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
export const MAX_REDIRECTS = 10;

/** Where a 3xx exchange points (absolute http(s), fragment dropped), if it is a redirect. */
export function redirectTarget(x: HttpExchange): string | undefined {
  if (!REDIRECTS.has(x.response.status)) return undefined;
  const location = x.response.headers.find(([k]) => k.toLowerCase() === 'location')?.[1];
  if (location === undefined) return undefined;
  try {
    const u = new URL(location, x.url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    u.hash = '';
    return u.href;
  } catch {
    return undefined;
  }
}

/** The request a redirect leads to: 301/302/303 turn a POST into a body-less GET, 307/308 keep it. */
export function redirectedRequest(prev: OutgoingRequest, status: number, url: string): OutgoingRequest {
  if (status === 307 || status === 308) return { ...prev, url };
  const headers = prev.headers.filter(([k]) => !['content-type', 'content-length'].includes(k.toLowerCase()));
  return { url, method: prev.method === 'HEAD' ? 'HEAD' : 'GET', headers };
}

/** Request headers that are the connection's business, not the page's. */
const HOP_HEADERS = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'accept-encoding']);

export function outgoingHeaders(headers: { name: string; value: string }[]): HeaderList {
  const out: HeaderList = headers.filter((h) => !h.name.startsWith(':') && !HOP_HEADERS.has(h.name.toLowerCase())).map((h) => [h.name, h.value]);
  // the recorded bytes must be the payload, so no content-coding is asked for
  out.push(['Accept-Encoding', 'identity']);
  return out;
}

/** The response headers as route.fulfill takes them: one value per name (Set-Cookie lines joined by \n, as Playwright splits them). */
export function fulfilHeaders(headers: HeaderList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of headers) {
    const name = k.toLowerCase();
    if (name === 'transfer-encoding' || name === 'connection' || name === 'keep-alive') continue;
    if (out[name] === undefined) out[name] = v;
    else out[name] += name === 'set-cookie' ? `\n${v}` : `, ${v}`;
  }
  return out;
}

export interface RecorderOptions {
  fetcher: Fetcher;
  limits: RecorderLimits;
  /** aborted at the capture's deadline */
  signal: AbortSignal;
  /** the request belongs to the captured page (not a pop-up, not a worker of another page) */
  isOwn: (r: Request) => boolean;
  /** the request is the captured page's main-frame navigation */
  isMainDocument: (r: Request) => boolean;
  onRecord?: (x: HttpExchange, r: Request) => void;
}

export class Recorder {
  readonly exchanges: HttpExchange[] = [];
  /** over the resource or byte budget: aborted, not recorded */
  dropped = 0;
  /** refused by the address policy */
  refused = 0;
  /** requests that failed on the network (not recorded) */
  failed = 0;
  /** payload bytes recorded */
  bytes = 0;
  mainFailure: MainFailure | undefined;
  /** the main document answered with a redirect to here: page-capture navigates to it */
  mainRedirect: string | undefined;
  private started = 0;
  private stopped = false;
  /** requests being answered now, and when the last one ended */
  private inFlight = 0;
  private lastEnded = 0;
  /** the recorded bodies and the ones being read, together */
  private readonly budget: ByteBudget;

  private readonly o: RecorderOptions;

  constructor(o: RecorderOptions) {
    this.o = o;
    this.budget = new ByteBudget(o.limits.maxBytes);
  }

  /** Everything after this is aborted: the host's part of the capture is over. */
  stop(): void {
    this.stopped = true;
  }

  readonly handle = async (route: Route): Promise<void> => {
    this.inFlight++;
    try {
      await this.answer(route);
    } finally {
      this.inFlight--;
      this.lastEnded = Date.now();
    }
  };

  /**
   * Resolves once no request has been in flight for `quietMs`, counted from the call at the
   * earliest (what the page fetches around its load has been answered, and its handlers have had
   * a moment to run), or after `maxMs` (a page that never goes quiet, e.g. polling, is read as it
   * is then), or when `signal` aborts.
   */
  async quiet(quietMs: number, maxMs: number, signal: AbortSignal): Promise<void> {
    const called = Date.now();
    const until = called + maxMs;
    for (;;) {
      const now = Date.now();
      if (now >= until || signal.aborted) return;
      const wait = this.inFlight > 0 ? quietMs : Math.max(this.lastEnded, called) + quietMs - now;
      if (wait <= 0) return;
      await sleep(Math.min(wait, until - now), undefined, { signal }).catch(() => undefined);
    }
  }

  private async answer(route: Route): Promise<void> {
    const request = route.request();
    const main = this.o.isMainDocument(request);
    // a pop-up's requests are not this page's (the pop-up is being closed)
    if (this.stopped || this.o.signal.aborted || !this.o.isOwn(request)) return abort(route);
    let out: OutgoingRequest = { url: request.url(), method: request.method(), headers: outgoingHeaders(await request.headersArray()) };
    const body = request.postDataBuffer();
    if (body !== null) out.body = body;
    for (let hop = 0; ; hop++) {
      const x = await this.exchange(out, request, main);
      if (x === undefined) return abort(route);
      const next = redirectTarget(x);
      if (next === undefined || hop >= MAX_REDIRECTS) {
        await route.fulfill({ status: x.response.status, headers: fulfilHeaders(x.response.headers), body: x.response.body }).catch(() => {});
        return;
      }
      if (main) {
        this.mainRedirect = next;
        // a 204 ends the navigation without an error page (an abort would commit one, and that
        // navigation would interrupt page-capture's next goto)
        await route.fulfill({ status: 204, body: '' }).catch(() => {});
        return;
      }
      out = redirectedRequest(out, x.response.status, next);
    }
  }

  /** One request through the fetcher, within the page's budget; recorded, or undefined when it was not. */
  private async exchange(out: OutgoingRequest, request: Request, main: boolean): Promise<HttpExchange | undefined> {
    if (this.started >= this.o.limits.maxResources || this.bytes >= this.o.limits.maxBytes) {
      this.dropped++;
      if (main)
        this.mainFailure = {
          kind: 'too-large',
          message: `the page went over its budget of ${this.o.limits.maxResources} resources / ${this.o.limits.maxBytes} bytes before its document loaded`,
        };
      return undefined;
    }
    this.started++;
    let x: HttpExchange;
    try {
      // one response may use the page's whole budget (not the fetcher's smaller default), and no more than is left of it
      x = await this.o.fetcher(out, { signal: this.o.signal, maxBytes: this.o.limits.maxBytes, budget: this.budget });
    } catch (err) {
      const type = (err as { type?: string }).type;
      if (type === 'refused') this.refused++;
      else if (type === 'too-large') this.dropped++;
      else this.failed++;
      if (main) this.mainFailure = { kind: type === 'refused' ? 'refused' : type === 'too-large' ? 'too-large' : 'network', message: (err as Error).message };
      return undefined;
    }
    if (this.stopped || this.o.signal.aborted) {
      this.budget.give(x.response.body.length);
      return undefined;
    }
    // the body's bytes were taken from the budget as they were read: they stay taken, recorded
    this.bytes += x.response.body.length;
    this.exchanges.push(x);
    this.o.onRecord?.(x, request);
    return x;
  }

  /** The redirect the main document asked for, once. */
  takeMainRedirect(): string | undefined {
    const next = this.mainRedirect;
    this.mainRedirect = undefined;
    return next;
  }
}

function abort(route: Route): Promise<void> {
  // the page may be gone already (deadline, context closed): nothing to answer then
  return route.abort('blockedbyclient').catch(() => {});
}
