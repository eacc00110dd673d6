// What an archive needs beside it (issue 26), on the API's side: signing the archives it requires,
// each after its own can_view at HIGHER_CONSISTENCY, and DELETE /api/archives/:id, refused with 409
// naming the archives that require it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { ConflictError, ForbiddenError, NotFoundError } from '../../domain/errors.ts';
import type { Identity } from '../../domain/identity.ts';
import { canDelete, canView } from '../../fga/authorize.ts';
import { deleteArchive } from '../../ledger/delete-archive.ts';
import { requiredArchives } from '../../store/archive-requires.ts';
import { findArchive } from '../../store/archives.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { ArchiveDeleted } from '../schemas/archives.ts';
import { errorAnswer, errorResponses, NoBody, notFoundResponse, UuidParams } from '../schemas/common.ts';

/**
 * The signed URLs of the archives `id` requires. One the caller may not see, or that is not in the
 * ledger, is not signed and not named: it only counts in `withheld` (a 404 of its own would tell
 * an outsider holding a share of this archive which ids exist).
 */
export async function signRequired(
  deps: Pick<AppDeps, 'db' | 'fga' | 'signer'>,
  identity: Identity,
  id: string,
  ttlSeconds: number,
): Promise<{ requires?: { id: string; objectKey: string; url: string }[]; withheld?: number }> {
  const { found, unresolved } = await requiredArchives(deps.db, id);
  if (found.length === 0 && unresolved === 0) return {};
  const allowed = await Promise.all(found.map((a) => canView(deps.fga, identity, a.id)));
  const visible = found.filter((_, i) => allowed[i]);
  const requires = await Promise.all(
    visible.map(async (a) => ({ id: a.id, objectKey: a.objectKey, url: await deps.signer(a.bucket, a.objectKey, ttlSeconds) })),
  );
  const withheld = found.length - visible.length + unresolved;
  return { requires, ...(withheld > 0 ? { withheld } : {}) };
}

const RequiredBy = Type.Object(
  { error: Type.String(), requiredBy: Type.Array(Type.Object({ id: Type.String(), url: Type.String(), objectKey: Type.String() })) },
  { additionalProperties: true, description: 'other archives require this one (their revisit records refer to payloads stored in it): delete those first' },
);

const archiveRequiresRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, opts) => {
  const { db, fga, s3 } = opts.deps;
  app.delete(
    '/api/archives/:id',
    {
      schema: {
        summary: 'Delete an archive',
        description:
          'can_view and can_delete at HIGHER_CONSISTENCY. An unknown id and one you may not see give the same 404; one you may see but not delete is 403; one other archives require is 409 naming them.',
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
    async (request) => {
      const identity = requireIdentity(request);
      const id = request.params.id.toLowerCase();
      const [viewable, deletable, row] = await Promise.all([canView(fga, identity, id), canDelete(fga, identity, id), findArchive(db, id)]);
      if (!viewable || row === undefined) throw new NotFoundError();
      if (!deletable) throw new ForbiddenError('you may view this archive but not delete it: only the owner of its crawl may');
      const outcome = await deleteArchive({ db, s3, log: (m) => request.log.warn(m) }, id);
      if (outcome.kind === 'missing') throw new NotFoundError();
      if (outcome.kind === 'required') {
        throw new ConflictError(
          `archive ${id} is required by ${outcome.by.length} other archive(s): ${outcome.by.map((a) => a.id).join(', ')} — their revisit records refer to payloads stored in it; delete those first`,
          { requiredBy: outcome.by },
        );
      }
      request.log.info({ archiveId: id, subject: identity.subject }, 'deleted archive');
      return { id, deleted: true as const, objectDeleted: outcome.objectDeleted };
    },
  );
};

export default archiveRequiresRoutes;
