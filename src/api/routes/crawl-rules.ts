// GET /api/crawl-rules/check: the checks POST /api/crawls runs on seeds and rules, without starting
// anything (a GET: it writes nothing). 200 with ok:false when a check fails; 400 only when the
// query itself is malformed. Served whether or not crawls are configured.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BadRequestError } from '../errors.ts';
import { explainCrawlRules, MAX_PATTERN_LENGTH, parseRuleParam, type RuleInput } from '../../domain/rules/index.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorResponses } from '../schemas/common.ts';
import { CrawlRulesCheckQuery, CrawlRulesReport } from '../schemas/crawl-rules.ts';

const crawlRulesRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app) => {
  app.get(
    '/api/crawl-rules/check',
    {
      schema: {
        summary: 'Check seeds and crawl rules without starting a crawl',
        description:
          'Runs the checks POST /api/crawls runs. Repeat `seed` for each seed and `rule` (action:pattern, e.g. follow:same-site) for each rule, in order; ' +
          'no rule means the default [{"follow":"same-origin"}]. A failed check is 200 with ok:false; only a malformed query is 400.',
        tags: ['crawls'],
        querystring: CrawlRulesCheckQuery,
        response: { 200: CrawlRulesReport, ...errorResponses },
      },
    },
    async (request) => {
      requireIdentity(request);
      const { seed, rule } = request.query;
      let rules: RuleInput[] | undefined;
      if (rule !== undefined) {
        const parsed = rule.map((r) => parseRuleParam(r));
        const bad = parsed.flatMap((r, i) =>
          r === null
            ? [{ field: `querystring.rule[${i}]`, message: `must be action:pattern (follow, capture or skip; 1 to ${MAX_PATTERN_LENGTH} characters)` }]
            : [],
        );
        if (bad.length > 0) throw new BadRequestError('invalid request', { details: bad });
        rules = parsed as RuleInput[];
      }
      return explainCrawlRules(seed, rules);
    },
  );
};

export default crawlRulesRoutes;
