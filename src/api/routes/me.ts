// GET /api/me: only about the caller — who the token (or headers) say they are, and canSubmit,
// the same question the crawl routes ask. Never 404: "may not" is canSubmit false.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { canSubmit } from '../../fga/authorize.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorResponses, NoQuery } from '../schemas/common.ts';
import { Me } from '../schemas/me.ts';

const meRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, opts) => {
  const { fga } = opts.deps;
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
    async (request) => {
      const identity = requireIdentity(request);
      const org = identity.organizations[0];
      const submit = org === undefined ? false : await canSubmit(fga, identity, org);
      return { subject: identity.subject, organizations: identity.organizations, canSubmit: submit };
    },
  );
};

export default meRoutes;
