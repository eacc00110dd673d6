// The webhook contract between the ledger and the capture flow (design.md "The webhook
// contract"), kept as the Windmill flow had it, defined once: TypeBox schemas with their limits,
// and the types are what the schemas say (Static). The API's report and heartbeat routes, the
// flow's receiver (the dispatch), admission and reconcile (the manifest and the links artifact)
// all validate against these.
import Type, { type Static, type TSchema } from 'typebox';
import { CRAWL_LIMITS } from './crawl.ts';
import { QaAttemptSchema } from './qa.ts';

/** What a capture can produce; CAPTURE_LEDGER_CAPTURE_FORMATS picks among them. */
export const CAPTURE_FORMATS = ['png', 'webp', 'html', 'links', 'mhtml', 'wacz'] as const;
export type CaptureFormat = (typeof CAPTURE_FORMATS)[number];

/** Every limit of what crosses the boundary. */
export const CONTRACT_LIMITS = {
  url: 8192,
  crawlId: 200,
  taskId: 512,
  manifestKey: 1024,
  /** S3's version ids are at most 1,024 bytes */
  objectVersion: 1024,
  manifestError: 4096,
  artifactPrefix: 1024,
  capability: 512,
  heartbeatUrl: 2048,
  /** host name (≤ 253) with a port */
  host: 260,
  reportPages: 100_000,
  heartbeatHosts: 10_000,
  counts: 1_000_000,
  /** Node's timers and Postgres integers both hold this */
  delayMs: 2_147_483_647,
  /** the archives one manifest may require (each known payload names one; DEDUP_LIMITS.knownPerCapture) */
  requiredArchives: 64,
} as const;

const literals = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values] });
const nullable = <T extends TSchema>(schema: T) =>
  Type.Unsafe<Static<T> | null>({ ...(schema as object), type: [(schema as unknown as { type: string }).type, 'null'] });
const DateTime = Type.String({ format: 'date-time' });
const Depth = Type.Integer({ minimum: 0, maximum: CRAWL_LIMITS.maxDepth });
const Url = Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.url });
const Host = Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.host });
const Count = Type.Integer({ minimum: 0, maximum: CONTRACT_LIMITS.counts });

/** ledger → flow: POST $CAPTURE_LEDGER_CRAWL_WEBHOOK_URL with Bearer $..._TOKEN */
export const Dispatch = Type.Object(
  {
    crawlId: Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.crawlId, pattern: '^[A-Za-z0-9._-]+$' }),
    depth: Type.Integer({ minimum: 0 }),
    orgId: Type.String({ minLength: 1 }),
    /** where the flow POSTs the level report, with a Bearer JWT */
    reportUrl: Type.String({ minLength: 1 }),
    formats: Type.Array(literals(CAPTURE_FORMATS), { minItems: 1 }),
    signing: Type.Boolean(),
    perHostDelayMs: Type.Integer({ minimum: 0 }),
    hostParallelism: Type.Integer({ minimum: 1 }),
    /** per host name (with port): the earliest time the next capture may be submitted, last
     * finish on that host + delay, so spacing also holds across levels. ISO 8601. */
    notBefore: Type.Record(Type.String(), Type.String()),
    /** follow pages also ask for the `links` format */
    pages: Type.Array(Type.Object({ url: Type.String({ minLength: 1 }), follow: Type.Boolean() }, { additionalProperties: false })),
    /** The per-level report capability: a random secret minted for this level. The report (and
     * every heartbeat) presents it in the CAPABILITY_HEADER; the ledger compares it in constant
     * time. It is what ties a report to its dispatch: the reporter needs no grant on the org. */
    capability: Type.Optional(Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.capability })),
    /** where every artifact and manifest of this level goes: keys are `${artifactPrefix}<taskId>…`
     * (ends with '/'; relative, no empty, '.' or '..' segment); a manifestKey must be exactly
     * `${artifactPrefix}<taskId>.result.json` */
    artifactPrefix: Type.Optional(Type.String({ minLength: 2, maxLength: CONTRACT_LIMITS.artifactPrefix, pattern: '^(?!/)(?!.*(^|/)\\.{1,2}/)(?!.*//).*/$' })),
    /** ISO 8601: the level must be reported before this; every wait (Crawl-delay, notBefore, a
     * slow host) is bounded by it, and a page that cannot start in time is reported failed */
    deadline: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    /** where the flow POSTs heartbeats while it works on the level (same capability) */
    heartbeatUrl: Type.Optional(Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.heartbeatUrl })),
    /** score each capture against its own replay, and capture once more one that falls short (qa.ts) */
    qa: Type.Optional(Type.Boolean()),
    /** the in-page behaviors every capture runs after load: seconds of budget (0: none) and whether
     * site-specific ones may run; absent (a ledger from before), the flow's defaults */
    behaviors: Type.Optional(
      Type.Object(
        { seconds: Type.Integer({ minimum: 0, maximum: CRAWL_LIMITS.behaviorsSeconds }), siteSpecific: Type.Boolean() },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type DispatchBody = Static<typeof Dispatch>;

/** One host's state in a heartbeat. */
export const HostProgressSchema = Type.Object(
  {
    host: Host,
    /** pages of this level still waiting for the host */
    queued: Count,
    /** 0 or 1: captures are never concurrent on one host */
    inFlight: Type.Integer({ minimum: 0, maximum: 1 }),
    /** ISO 8601: the earliest the next capture may start (null: at once) */
    nextAllowedAt: nullable(DateTime),
  },
  { additionalProperties: false },
);
export type HostProgress = Static<typeof HostProgressSchema>;

/** flow → ledger: POST heartbeatUrl (= /api/crawls/:id/levels/:depth/heartbeat) every few
 * seconds while the level is captured, with the level's capability. Answered 202. */
export const Heartbeat = Type.Object(
  {
    depth: Depth,
    pagesTotal: Count,
    pagesDone: Count,
    pagesInFlight: Count,
    hosts: Type.Array(HostProgressSchema, { maxItems: CONTRACT_LIMITS.heartbeatHosts }),
  },
  { additionalProperties: false },
);
export type HeartbeatBody = Static<typeof Heartbeat>;

/** The header a level report and a heartbeat carry the dispatch's capability in. */
export const CAPABILITY_HEADER = 'x-capture-capability';

export const PAGE_REPORT_STATUSES = ['captured', 'failed', 'skipped'] as const;

export const PageReportSchema = Type.Object(
  {
    url: Url,
    status: literals(PAGE_REPORT_STATUSES),
    skipReason: Type.Optional(literals(['robots'] as const)),
    taskId: Type.Optional(Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.taskId })),
    /** where the capturer wrote `<key>.result.json`; never the result itself */
    manifestKey: Type.Optional(Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.manifestKey })),
    /** the version the store gave the manifest's put (a versioned bucket): the ledger reads that one */
    manifestVersionId: Type.Optional(Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.objectVersion })),
    manifestError: Type.Optional(Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.manifestError })),
    finalUrl: Type.Optional(Url),
    submittedAt: Type.Optional(DateTime),
    finishedAt: Type.Optional(DateTime),
  },
  { additionalProperties: false },
);
export type PageReport = Static<typeof PageReportSchema>;

export const HostReportSchema = Type.Object(
  {
    /** host name with port, as DispatchBody.notBefore is keyed */
    host: Host,
    /** ms between one capture's finish and the next submit */
    delayMs: Type.Integer({ minimum: 0, maximum: CONTRACT_LIMITS.delayMs }),
    /** ISO 8601 */
    lastFinishedAt: Type.Optional(DateTime),
  },
  { additionalProperties: false },
);
export type HostReport = Static<typeof HostReportSchema>;

/** flow → ledger: POST reportUrl (= /api/crawls/:id/levels/:depth) */
export const LevelReport = Type.Object(
  {
    depth: Depth,
    pages: Type.Array(PageReportSchema, { maxItems: CONTRACT_LIMITS.reportPages }),
    /** per host it captured on: the delay it kept between captures (the longer of perHostDelayMs
     * and robots.txt Crawl-delay) and its last finish, so the ledger's next notBefore keeps the
     * spacing even when the flow that learnt the Crawl-delay is gone */
    hosts: Type.Optional(
      Type.Array(HostReportSchema, {
        maxItems: CONTRACT_LIMITS.reportPages,
        description: 'per host: the delay the flow kept (perHostDelayMs or a longer Crawl-delay) and its last finish',
      }),
    ),
  },
  { additionalProperties: false },
);
export type LevelReportBody = Static<typeof LevelReport>;

export const ManifestArtifactSchema = Type.Object({
  format: literals(CAPTURE_FORMATS),
  bucket: Type.String(),
  key: Type.String(),
  sha256: Type.String(),
  size: Type.Integer({ minimum: 0 }),
  /** the object version the store gave the put, in a versioned bucket: the ledger reads only that one */
  versionId: Type.Optional(Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.objectVersion })),
});
export type ManifestArtifact = Static<typeof ManifestArtifactSchema>;

export const ManifestLinkSchema = Type.Object({ href: Type.String(), rel: Type.Optional(Type.String()) });
export type ManifestLink = Static<typeof ManifestLinkSchema>;

export const WITHHELD_REASONS = ['url-policy', 'content-type', 'no-archive', 'deny', 'unattributed'] as const;

/** `<key>.result.json`, written by the capturer next to its artifacts. Other fields are allowed
 * (a newer capturer may say more); these are what the ledger relies on. */
export const ManifestSchema = Type.Object({
  taskId: Type.String({ minLength: 1 }),
  url: Type.String(),
  finalUrl: Type.Optional(Type.String()),
  status: literals(['succeeded', 'failed'] as const),
  error: Type.Optional(Type.Object({ type: Type.String(), message: Type.Optional(Type.String()) })),
  artifacts: Type.Array(ManifestArtifactSchema),
  documentWithheld: Type.Optional(literals(WITHHELD_REASONS)),
  /** the page's title as rendered (the picker shows it) */
  title: Type.Optional(Type.String()),
  software: Type.Optional(Type.String()),
  startedAt: Type.Optional(Type.String()),
  finishedAt: Type.Optional(Type.String()),
  /** what the capture left out, when it left anything out: requests over the page's resource or
   * byte budget (aborted, not recorded), requests the address policy refused, links past the
   * per-page cap (not in the links artifact) */
  dropped: Type.Optional(Type.Object({ resources: Type.Integer(), refused: Type.Integer(), links: Type.Integer() })),
  /** the page text or title was longer than the capture keeps: their lengths before the cut (UTF-8 bytes) */
  truncated: Type.Optional(Type.Object({ text: Type.Optional(Type.Integer()), title: Type.Optional(Type.Integer()) })),
  /** the capture's quality check, when the crawl asked for it: each attempt, the kept one last (qa.ts) */
  qa: Type.Optional(Type.Array(QaAttemptSchema, { minItems: 1, maxItems: 2 })),
  /** the WACZ keys (same bucket) its revisit records refer to, as its datapackage.json says */
  requires: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.manifestKey }), { maxItems: CONTRACT_LIMITS.requiredArchives })),
});
export type Manifest = Static<typeof ManifestSchema>;

/**
 * What a manifest must hold for the ledger to read it at all: the fields it relies on have their
 * types; an artifact needs only format, bucket and key (a size or digest it cannot read is
 * unknown, not fatal — admission judges them).
 */
export const ManifestAsRead = Type.Object({
  taskId: Type.String({ minLength: 1 }),
  url: Type.String(),
  finalUrl: Type.Optional(Type.String()),
  status: literals(['succeeded', 'failed'] as const),
  error: Type.Optional(Type.Object({ type: Type.String() })),
  artifacts: Type.Optional(Type.Array(Type.Object({ format: Type.String(), bucket: Type.String(), key: Type.String() }))),
  software: Type.Optional(Type.String()),
  startedAt: Type.Optional(Type.String()),
  finishedAt: Type.Optional(Type.String()),
  requires: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: CONTRACT_LIMITS.manifestKey }), { maxItems: CONTRACT_LIMITS.requiredArchives })),
});

/** The `links` artifact's body: what the page linked to. */
export const LinksArtifactSchema = Type.Object({ url: Type.String(), finalUrl: Type.Optional(Type.String()), links: Type.Array(ManifestLinkSchema) });
export type LinksArtifact = Static<typeof LinksArtifactSchema>;

export const ERROR_TYPE_CANCELLED = 'ERROR_TYPE_CANCELLED';
/** the address policy refused the page, a redirect hop or its robots.txt host: nothing was sent */
export const ERROR_TYPE_ADDRESS_REFUSED = 'ERROR_TYPE_ADDRESS_REFUSED';
