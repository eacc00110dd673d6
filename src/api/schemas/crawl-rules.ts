// GET /api/crawl-rules/check
import Type from 'typebox';
import { MAX_PATTERN_LENGTH, MAX_RULES, RULE_ACTIONS } from '../../domain/rules/index.ts';
import { RuleActionSchema } from './common.ts';

export const MAX_CHECK_SEEDS = 1000;
export const MAX_SEED_LENGTH = 8192;

export const CrawlRulesCheckQuery = Type.Object(
  {
    seed: Type.Array(Type.String({ minLength: 1, maxLength: MAX_SEED_LENGTH }), { minItems: 1, maxItems: MAX_CHECK_SEEDS }),
    rule: Type.Optional(
      Type.Array(Type.String({ pattern: `^(${RULE_ACTIONS.join('|')}):[\\s\\S]{1,${MAX_PATTERN_LENGTH}}$` }), { minItems: 1, maxItems: MAX_RULES }),
    ),
  },
  { additionalProperties: false },
);

export const CrawlRulesReport = Type.Object(
  {
    seeds: Type.Array(
      Type.Object(
        {
          url: Type.String(),
          valid: Type.Boolean(),
          site: Type.Optional(Type.String({ description: 'registrable domain, or the host name itself (IP address, localhost)' })),
          followed: Type.Optional(Type.Boolean({ description: 'the rules decide follow for it; absent while a pattern is invalid' })),
        },
        { additionalProperties: false },
      ),
    ),
    rules: Type.Array(
      Type.Object(
        {
          rule: Type.Integer({ description: 'numbered from 1' }),
          action: RuleActionSchema,
          kind: Type.Optional(Type.Unsafe<'scope' | 'domain' | 'prefix'>({ type: 'string', enum: ['scope', 'domain', 'prefix'] })),
          pattern: Type.String({ description: 'as it would be fixed on the crawl (URL prefixes normalised)' }),
          coveredBy: Type.Optional(Type.Integer({ description: 'the earliest earlier rule that matches every URL this one would' })),
          valid: Type.Optional(Type.Boolean({ description: 'false when the pattern is none of the three kinds' })),
          reason: Type.Optional(Type.String({ description: 'why the pattern is invalid' })),
        },
        { additionalProperties: false },
      ),
    ),
    ok: Type.Boolean({ description: 'POST /api/crawls would accept these seeds and rules' }),
  },
  { additionalProperties: false },
);
