// GET /api/me: only about the caller — who the token (or headers) say they are, and canSubmit,
// the same question the crawl routes ask. Never 404: "may not" is canSubmit false.
import type { FastifyInstance } from 'fastify';
import { canSubmit } from '../../fga/authorize.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorResponses } from '../schemas.ts';

export default async function meRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { fga } = opts.deps;
  app.get(
    '/api/me',
    {
      schema: {
        summary: 'Who you are, and whether you may start crawls',
        description: 'canSubmit is can_submit on your first organization (crawls are attributed to it), at HIGHER_CONSISTENCY; false when you have none.',
        tags: ['identity'],
        querystring: { type: 'object', properties: {}, additionalProperties: false },
        response: {
          200: {
            type: 'object',
            properties: {
              subject: { type: 'string' },
              organizations: { type: 'array', items: { type: 'string' } },
              canSubmit: { type: 'boolean' },
            },
            required: ['subject', 'organizations', 'canSubmit'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const identity = requireIdentity(request);
      const org = identity.organizations[0];
      const submit = org === undefined ? false : await canSubmit(fga, identity, org);
      return { subject: identity.subject, organizations: identity.organizations, canSubmit: submit };
    },
  );
}
