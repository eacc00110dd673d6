// What the rules decided: GET /api/crawls/:id/decisions and GET /api/decisions.
import Type, { type Static } from 'typebox';
import { FixedRules, Nullable, RuleActionSchema } from './common.ts';

export const MAX_DECISION_ROWS = 500;
export const DEFAULT_DAYS = 90;
export const MAX_DAYS = 36_500;

const samples = Type.Array(Type.String(), { maxItems: 5 });

export const CrawlDecisions = Type.Object(
  {
    rules: Type.Array(FixedRules.items, { description: 'as fixed on the crawl' }),
    decisions: Type.Array(
      Type.Object(
        {
          depth: Type.Integer({ description: 'the level whose pages the links were read from' }),
          rule: Type.Integer({ description: 'numbered from 1; 0 = no rule matched' }),
          action: RuleActionSchema,
          hostname: Type.String({ description: 'port dropped' }),
          links: Type.Integer({ description: 'distinct URLs' }),
          samples,
        },
        { additionalProperties: false },
      ),
    ),
    robots: Type.Array(Type.Object({ hostname: Type.String(), pages: Type.Integer(), samples }, { additionalProperties: false })),
    refused: Type.Array(
      Type.Object(
        {
          depth: Type.Integer({ description: 'the level whose pages the links were read from, or whose page was refused' }),
          hostname: Type.String({ description: 'port dropped, cut to 253 characters' }),
          code: Type.String(),
          urls: Type.Integer(),
          samples,
        },
        { additionalProperties: false },
      ),
      {
        description:
          'what the address policy kept out (a local, private or link-local address, a port, a host over 253 or a URL over 8 KiB: refused as a link; fetch-refused: the flow refused the address a page resolved to, a redirect hop or its robots.txt host) and links past the per-page cap (too-many-links)',
      },
    ),
  },
  { additionalProperties: false },
);

export const DecisionsQuery = Type.Object(
  {
    domain: Type.String({ minLength: 1, maxLength: 253, description: 'a host name: matches it and its subdomains at a label boundary' }),
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DAYS, default: DEFAULT_DAYS })),
    action: Type.Optional(Type.Unsafe<Static<typeof RuleActionSchema>>({ ...RuleActionSchema, default: 'skip' })),
  },
  { additionalProperties: false },
);

export const AcrossCrawls = Type.Object(
  {
    decisions: Type.Array(
      Type.Object(
        {
          crawlId: Type.String(),
          orgId: Type.String(),
          startedAt: Type.String({ format: 'date-time' }),
          seeds: Type.Array(Type.String()),
          depth: Type.Integer(),
          rule: Type.Integer(),
          action: RuleActionSchema,
          pattern: Nullable(Type.String({ description: 'the rule’s pattern as fixed on the crawl; null for rule 0 (no rule matched)' })),
          hostname: Type.String(),
          links: Type.Integer({ description: 'distinct URLs at that depth' }),
        },
        { additionalProperties: false },
      ),
    ),
    truncated: Type.Boolean({ description: `the answer was cut at ${MAX_DECISION_ROWS} rows` }),
  },
  { additionalProperties: false },
);
