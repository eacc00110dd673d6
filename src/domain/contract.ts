// The webhook contract between the ledger and the capture flow (design.md "The webhook
// contract"), kept as the Windmill flow had it. Types only; schemas live beside the routes.
import type { TextTruncation } from './page-text.ts';

/** What a capture can produce; CAPTURE_LEDGER_CAPTURE_FORMATS picks among them. */
export const CAPTURE_FORMATS = ['png', 'webp', 'html', 'links', 'mhtml', 'wacz'] as const;
export type CaptureFormat = (typeof CAPTURE_FORMATS)[number];

/** ledger → flow: POST $CAPTURE_LEDGER_CRAWL_WEBHOOK_URL with Bearer $..._TOKEN */
export interface DispatchBody {
  crawlId: string;
  depth: number;
  orgId: string;
  /** where the flow POSTs the level report, with a Bearer JWT */
  reportUrl: string;
  formats: CaptureFormat[];
  signing: boolean;
  perHostDelayMs: number;
  hostParallelism: number;
  /** per host name (with port): the earliest time the next capture may be submitted,
   * last finish on that host + delay, so spacing also holds across levels. ISO 8601. */
  notBefore: Record<string, string>;
  /** follow pages also ask for the `links` format */
  pages: { url: string; follow: boolean }[];
  /**
   * The per-level report capability: a random secret minted for this level. The report (and
   * every heartbeat) presents it in the CAPABILITY_HEADER; the ledger compares it in constant
   * time. It is what ties a report to its dispatch: the reporter needs no grant on the org.
   */
  capability?: string;
  /** where every artifact and manifest of this level goes: keys are `${artifactPrefix}<taskId>…`
   * (ends with '/'); a manifestKey must be exactly `${artifactPrefix}<taskId>.result.json` */
  artifactPrefix?: string;
  /** ISO 8601: the level must be reported before this; every wait (Crawl-delay, notBefore, a
   * slow host) is bounded by it, and a page that cannot start in time is reported failed */
  deadline?: string;
  /** where the flow POSTs heartbeats while it works on the level (same capability) */
  heartbeatUrl?: string;
}

/** One host's state in a heartbeat. */
export interface HostProgress {
  host: string;
  /** pages of this level still waiting for the host */
  queued: number;
  /** 0 or 1: captures are never concurrent on one host */
  inFlight: number;
  /** ISO 8601: the earliest the next capture may start (null: at once) */
  nextAllowedAt: string | null;
}

/** flow → ledger: POST heartbeatUrl (= /api/crawls/:id/levels/:depth/heartbeat) every few
 * seconds while the level is captured, with the level's capability. Answered 202. */
export interface HeartbeatBody {
  depth: number;
  pagesTotal: number;
  pagesDone: number;
  pagesInFlight: number;
  hosts: HostProgress[];
}

/** The header a level report and a heartbeat carry the dispatch's capability in. */
export const CAPABILITY_HEADER = 'x-capture-capability';

export type PageReportStatus = 'captured' | 'failed' | 'skipped';

export interface PageReport {
  url: string;
  status: PageReportStatus;
  skipReason?: 'robots';
  taskId?: string;
  /** where the capturer wrote `<key>.result.json`; never the result itself */
  manifestKey?: string;
  manifestError?: string;
  finalUrl?: string;
  submittedAt?: string;
  finishedAt?: string;
}

/** flow → ledger: POST reportUrl (= /api/crawls/:id/levels/:depth) */
export interface LevelReportBody {
  depth: number;
  pages: PageReport[];
  /** per host it captured on: the delay it kept between captures (the longer of perHostDelayMs
   * and robots.txt Crawl-delay) and its last finish, so the ledger's next notBefore keeps the
   * spacing even when the flow that learnt the Crawl-delay is gone */
  hosts?: HostReport[];
}

export interface HostReport {
  /** host name with port, as DispatchBody.notBefore is keyed */
  host: string;
  /** ms between one capture's finish and the next submit */
  delayMs: number;
  /** ISO 8601 */
  lastFinishedAt?: string;
}

export interface ManifestArtifact {
  format: CaptureFormat;
  bucket: string;
  key: string;
  sha256: string;
  size: number;
}

export interface ManifestLink {
  href: string;
  rel?: string;
}

/** `<key>.result.json`, written by the capturer next to its artifacts. */
export interface Manifest {
  taskId: string;
  url: string;
  finalUrl?: string;
  status: 'succeeded' | 'failed';
  error?: { type: string; message?: string };
  artifacts: ManifestArtifact[];
  documentWithheld?: 'url-policy' | 'content-type' | 'no-archive' | 'deny' | 'unattributed';
  software?: string;
  startedAt?: string;
  finishedAt?: string;
  /** what the capture left out, when it left anything out: requests over the page's resource or
   * byte budget (aborted, not recorded), requests the address policy refused, links past the
   * per-page cap (not in the links artifact) */
  dropped?: { resources: number; refused: number; links: number };
  /** the page's text or title was longer than its cap (src/domain/page-text.ts) and only the
   * first MAX_PAGE_TEXT_BYTES / MAX_PAGE_TITLE_BYTES of UTF-8 went into pages/pages.jsonl: the
   * UTF-8 length before the cut */
  truncated?: TextTruncation;
}

/** The `links` artifact's body: what the page linked to. */
export interface LinksArtifact {
  url: string;
  finalUrl?: string;
  links: ManifestLink[];
}

export const ERROR_TYPE_CANCELLED = 'ERROR_TYPE_CANCELLED';
/** the address policy refused the page, a redirect hop or its robots.txt host: nothing was sent */
export const ERROR_TYPE_ADDRESS_REFUSED = 'ERROR_TYPE_ADDRESS_REFUSED';
