// The crawl routes' schemas (routes/crawls.ts): what POST /api/crawls takes, and a crawl as the
// list and GET /api/crawls/:id answer it.
import Type from 'typebox';
import { BEHAVIOR_DEFAULTS, CRAWL_LIMITS, STOP_REASONS, type CrawlState } from '../../domain/crawl.ts';
import { RULES_JSON_SCHEMA, type RuleInput } from '../../domain/rules/index.ts';
import { CursorQuery, errorAnswer, FixedRules, Nullable } from './common.ts';

const CRAWL_STATES: readonly CrawlState[] = ['running', 'succeeded', 'failed'];
export const CrawlStateSchema = Type.Unsafe<CrawlState>({ type: 'string', enum: [...CRAWL_STATES] });

const seeds = Type.Array(Type.String({ minLength: 1, maxLength: CRAWL_LIMITS.seedLength }), {
  minItems: 1,
  maxItems: CRAWL_LIMITS.seeds,
  description: 'URLs to start from (exactly one of seeds or fromTargets)',
});
const fromTargets = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: CRAWL_LIMITS.fromTargetsLimit, description: 'take the first n enabled targets' })) },
  { additionalProperties: false, description: "seed from your organization's enabled capture_targets (maxDepth then defaults to 0)" },
);

/**
 * POST /api/crawls. Exactly one of seeds and fromTargets (`oneOf`, so the document states the
 * rule); the route answers a request breaking it with the spec's own messages for "both" and
 * "neither" (domain/crawl.ts seedSource).
 */
export const CrawlRequest = Type.Object(
  {
    seeds: Type.Optional(seeds),
    fromTargets: Type.Optional(fromTargets),
    rules: Type.Optional(Type.Unsafe<RuleInput[]>({ ...RULES_JSON_SCHEMA, description: 'first match decides; default [{"follow":"same-origin"}]' })),
    maxDepth: Type.Optional(Type.Integer({ minimum: 0, maximum: CRAWL_LIMITS.maxDepth, description: 'default 2 (0 with fromTargets)' })),
    maxPages: Type.Optional(Type.Integer({ minimum: 1, maximum: CRAWL_LIMITS.maxPages, description: 'total pages, seeds included; default 30' })),
    perHostDelayMs: Type.Optional(
      Type.Integer({ minimum: 0, maximum: CRAWL_LIMITS.perHostDelayMs, description: 'from one finish to the next submit on a host; default 2000' }),
    ),
    hostParallelism: Type.Optional(Type.Integer({ minimum: 1, maximum: CRAWL_LIMITS.hostParallelism, description: 'distinct hosts at once; default 4' })),
    behaviorsSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: CRAWL_LIMITS.behaviorsSeconds,
        description: `seconds each page may spend on in-page behaviors after load (scrolling to its end, playing media, fetching lazy resources), bounded by the capture's deadline; 0 turns them off; default ${BEHAVIOR_DEFAULTS.behaviorsSeconds}`,
      }),
    ),
    siteBehaviors: Type.Optional(
      Type.Boolean({ description: 'a site-specific behavior replaces scrolling on the sites it knows (browsertrix-behaviors); default true' }),
    ),
    qa: Type.Optional(
      Type.Boolean({
        description:
          'score each capture against its own replay (pixels, text, requests it had not recorded) and capture once more, with longer behaviors, one that needs review; both attempts are in its manifest and the verdict in the archive list; default false',
      }),
    ),
  },
  { additionalProperties: false, oneOf: [{ required: ['seeds'] }, { required: ['fromTargets'] }] },
);

export const CrawlStarted = Type.Object({ crawlId: Type.String() }, { additionalProperties: false });

export const DEFAULT_CRAWL_PAGE = 50;

export const CrawlListQuery = Type.Object(
  {
    state: Type.Optional(CrawlStateSchema),
    ...CursorQuery('startedAt'),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: DEFAULT_CRAWL_PAGE })),
  },
  { additionalProperties: false },
);

const summaryProperties = {
  id: Type.String(),
  orgId: Type.String(),
  state: CrawlStateSchema,
  stopReason: Type.Unsafe<(typeof STOP_REASONS)[number] | null>({ type: ['string', 'null'], enum: [...STOP_REASONS, null] }),
  seeds: Type.Array(Type.String()),
  startedAt: Type.String({ format: 'date-time' }),
  finishedAt: Nullable(Type.String({ format: 'date-time' })),
  waczCount: Type.Integer(),
};

/** One row of GET /api/crawls. */
export const CrawlSummary = Type.Object(summaryProperties, { additionalProperties: false });

/** GET /api/crawls/:id */
export const CrawlView = Type.Object(
  {
    ...summaryProperties,
    submittedBy: Type.String(),
    rules: FixedRules,
    maxDepth: Type.Integer(),
    maxPages: Type.Integer(),
    perHostDelayMs: Type.Integer(),
    hostParallelism: Type.Integer(),
    behaviorsSeconds: Type.Integer(),
    siteBehaviors: Type.Boolean(),
    qa: Type.Boolean(),
    formats: Type.Array(Type.String()),
    signing: Type.Boolean(),
    depthReached: Type.Integer(),
    dispatchedDepth: Nullable(Type.Integer()),
    pagesDiscovered: Type.Integer(),
    pagesCaptured: Type.Integer(),
    pagesFailed: Type.Integer(),
    pagesSkipped: Type.Integer(),
    pagesPending: Type.Integer(),
    failure: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

export const crawlUnavailable = { 503: errorAnswer('Temporal could not be reached; nothing was started') } as const;
export const crawlConflict = { 409: errorAnswer('a crawl is already running (retrying cannot help until it ends)') } as const;
