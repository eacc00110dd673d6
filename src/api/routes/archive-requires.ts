// DELETE /api/archives/:id (issue 26: refused with 409 naming the archives that require it). The
// decisions are in services/archives.ts, as is signing the archives one requires.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { requireIdentity } from '../identity.ts';
import { ArchiveDeleted } from '../schemas/archives.ts';
import { errorAnswer, errorResponses, NoBody, notFoundResponse, UuidParams } from '../schemas/common.ts';
import type { ArchiveService } from '../services/archives.ts';

const RequiredBy = Type.Object(
  { error: Type.String(), requiredBy: Type.Array(Type.Object({ id: Type.String(), url: Type.String(), objectKey: Type.String() })) },
  { additionalProperties: true, description: 'other archives require this one (their revisit records refer to payloads stored in it): delete those first' },
);

const archiveRequiresRoutes: FastifyPluginAsyncTypebox<{ archives: ArchiveService }> = async (app, { archives }) => {
  app.delete(
    '/api/archives/:id',
    {
      schema: {
        summary: 'Delete an archive',
        description:
          'can_view and can_delete at HIGHER_CONSISTENCY. An unknown id and one you may not see give the same 404; one you may see but not delete is 403; one other archives require is 409 naming them. ' +
          'Deleting removes every version of every object its capture wrote (the WACZ, screenshot, rendered html and mhtml, links and manifest), its pages in the search index, and its tuples, shares included; ' +
          'reconcile and a level reported again never register it anew. `objectDeleted: false` says the bucket kept some of it (the deletion stands; archive_deletions.cleanup_error says what).',
        tags: ['archives'],
        params: UuidParams,
        body: NoBody,
        response: {
          200: ArchiveDeleted,
          ...errorResponses,
          ...notFoundResponse,
          403: errorAnswer('you may view this archive but not delete it (only the owner of its crawl may)'),
          409: RequiredBy,
        },
      },
    },
    async (request) => archives.remove(requireIdentity(request), request.params.id.toLowerCase(), request.log),
  );
};

export default archiveRequiresRoutes;
