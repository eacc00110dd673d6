// The two archive endpoints: POST /api/archives/:id/url and GET /api/archives. What they decide is
// in services/archives.ts; these read the request, call it and reply.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseCursor } from '../../domain/cursor.ts';
import { requireIdentity } from '../identity.ts';
import { ArchiveList, ArchiveListQuery, DEFAULT_PAGE, MAX_EXAMINED, SignedUrl } from '../schemas/archives.ts';
import { errorResponses, NoBody, notFoundResponse, UuidParams } from '../schemas/common.ts';
import type { ArchiveService } from '../services/archives.ts';

const archiveRoutes: FastifyPluginAsyncTypebox<{ archives: ArchiveService }> = async (app, { archives }) => {
  app.post(
    '/api/archives/:id/url',
    {
      schema: {
        summary: 'A short-lived signed URL for one archive',
        description:
          'can_view is checked at HIGHER_CONSISTENCY right before signing. An unknown id and one you may not see give the same 404. ' +
          'An archive whose WACZ requires others (revisit records of payloads stored there) comes with their signed URLs in `requires`, each after its own can_view; those you may not see are left out and counted in `withheld`.',
        tags: ['archives'],
        params: UuidParams,
        body: NoBody,
        response: {
          200: SignedUrl,
          ...errorResponses,
          ...notFoundResponse,
        },
      },
    },
    async (request) => archives.signedUrl(requireIdentity(request), request.params.id.toLowerCase(), request.log),
  );

  app.get(
    '/api/archives',
    {
      schema: {
        summary: 'The archives you may see, newest first',
        description:
          'Pass the capturedAt of the last row as `before`, and its id as `beforeId` so rows sharing that capturedAt are not skipped (or follow the `Link` header). ' +
          `One request examines at most ${MAX_EXAMINED} candidates: a page can hold fewer rows than \`limit\` with more to come, and then \`X-Stopped-Early: true\` says so and \`Link\` continues where it stopped. ` +
          'Unknown query parameters are dropped.',
        tags: ['archives'],
        querystring: ArchiveListQuery,
        response: { 200: ArchiveList, ...errorResponses },
      },
    },
    async (request, reply) => {
      const page = await archives.list(requireIdentity(request), { cursor: parseCursor(request.query), limit: request.query.limit ?? DEFAULT_PAGE });
      request.log.debug({ ...page.scan, returned: page.rows.length, stoppedEarly: page.stoppedEarly }, 'archive page');
      if (page.link !== undefined) reply.header('link', page.link);
      reply.header('x-stopped-early', String(page.stoppedEarly));
      return page.rows;
    },
  );
};

export default archiveRoutes;
