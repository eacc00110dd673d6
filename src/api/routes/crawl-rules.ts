// GET /api/crawl-rules/check: the checks POST /api/crawls runs on seeds and rules, without starting
// anything (a GET: it writes nothing). 200 with ok:false when a check fails; 400 only when the
// query itself is malformed. Served whether or not crawls are configured.
import type { FastifyInstance } from 'fastify';
import { BadRequestError } from '../../domain/errors.ts';
import { explainCrawlRules, MAX_PATTERN_LENGTH, MAX_RULES, parseRuleParam, type RuleInput } from '../../domain/rules/index.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorResponses } from '../schemas.ts';

export const MAX_CHECK_SEEDS = 1000;
export const MAX_SEED_LENGTH = 8192;

const actionEnum = ['follow', 'capture', 'skip'] as const;

export const crawlRulesReportSchema = {
  type: 'object',
  properties: {
    seeds: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          url: { type: 'string' },
          valid: { type: 'boolean' },
          site: { type: 'string', description: 'registrable domain, or the host name itself (IP address, localhost)' },
          followed: { type: 'boolean', description: 'the rules decide follow for it; absent while a pattern is invalid' },
        },
        required: ['url', 'valid'],
        additionalProperties: false,
      },
    },
    rules: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          rule: { type: 'integer', description: 'numbered from 1' },
          action: { type: 'string', enum: actionEnum },
          kind: { type: 'string', enum: ['scope', 'domain', 'prefix'] },
          pattern: { type: 'string', description: 'as it would be fixed on the crawl (URL prefixes normalised)' },
          coveredBy: { type: 'integer', description: 'the earliest earlier rule that matches every URL this one would' },
          valid: { type: 'boolean', description: 'false when the pattern is none of the three kinds' },
          reason: { type: 'string', description: 'why the pattern is invalid' },
        },
        required: ['rule', 'action', 'pattern'],
        additionalProperties: false,
      },
    },
    ok: { type: 'boolean', description: 'POST /api/crawls would accept these seeds and rules' },
  },
  required: ['seeds', 'rules', 'ok'],
  additionalProperties: false,
} as const;

export default async function crawlRulesRoutes(app: FastifyInstance, _opts: { deps: AppDeps }): Promise<void> {
  app.get<{ Querystring: { seed: string[]; rule?: string[] } }>(
    '/api/crawl-rules/check',
    {
      schema: {
        summary: 'Check seeds and crawl rules without starting a crawl',
        description:
          'Runs the checks POST /api/crawls runs. Repeat `seed` for each seed and `rule` (action:pattern, e.g. follow:same-site) for each rule, in order; ' +
          'no rule means the default [{"follow":"same-origin"}]. A failed check is 200 with ok:false; only a malformed query is 400.',
        tags: ['crawls'],
        querystring: {
          type: 'object',
          properties: {
            seed: { type: 'array', minItems: 1, maxItems: MAX_CHECK_SEEDS, items: { type: 'string', minLength: 1, maxLength: MAX_SEED_LENGTH } },
            rule: {
              type: 'array',
              minItems: 1,
              maxItems: MAX_RULES,
              items: { type: 'string', pattern: `^(follow|capture|skip):[\\s\\S]{1,${MAX_PATTERN_LENGTH}}$` },
            },
          },
          required: ['seed'],
          additionalProperties: false,
        },
        response: { 200: crawlRulesReportSchema, ...errorResponses },
      },
    },
    async (request) => {
      requireIdentity(request);
      const { seed, rule } = request.query;
      let rules: RuleInput[] | undefined;
      if (rule !== undefined) {
        const parsed = rule.map((r) => parseRuleParam(r));
        const bad = parsed.flatMap((r, i) => (r === null ? [{ field: `querystring.rule[${i}]`, message: `must be action:pattern (follow, capture or skip; 1 to ${MAX_PATTERN_LENGTH} characters)` }] : []));
        if (bad.length > 0) throw new BadRequestError('invalid request', { details: bad });
        rules = parsed as RuleInput[];
      }
      return explainCrawlRules(seed, rules);
    },
  );
}
