// GET /api/me: only about the caller — who the token (or headers) say they are, and canSubmit,
// the same question the crawl routes ask (services/me.ts). Never 404: "may not" is canSubmit false.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireIdentity } from '../identity.ts';
import { errorResponses, NoQuery } from '../schemas/common.ts';
import { Me } from '../schemas/me.ts';
import type { MeService } from '../services/me.ts';

const meRoutes: FastifyPluginAsyncTypebox<{ me: MeService }> = async (app, { me }) => {
  app.get(
    '/api/me',
    {
      schema: {
        summary: 'Who you are, and whether you may start crawls',
        description: 'canSubmit is can_submit on your first organization (crawls are attributed to it), at HIGHER_CONSISTENCY; false when you have none.',
        tags: ['identity'],
        querystring: NoQuery,
        response: { 200: Me, ...errorResponses },
      },
    },
    async (request) => me.describe(requireIdentity(request)),
  );
};

export default meRoutes;
