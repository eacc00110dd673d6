// The two archive endpoints. Signing is the only enforcement point: can_view at
// HIGHER_CONSISTENCY immediately before the URL is signed. The list only decides what is shown
// (one BatchCheck per chunk of candidates, default consistency).
import type { FastifyInstance } from 'fastify';
import { BadRequestError, NotFoundError } from '../../domain/errors.ts';
import { canView, viewableArchives } from '../../fga/authorize.ts';
import { archiveCandidates, archiveView, fillPage, findArchive } from '../../store/archives.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { createUrlSigner } from '../presign.ts';
import { errorResponses, noBody, notFoundResponse, uuidParam } from '../schemas.ts';

/** A signed URL cannot be revoked: its lifetime is the gap between removing access and access ending. */
export const SIGNED_URL_TTL_SECONDS = 300;
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;

export const archiveSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    taskId: { type: 'string' },
    url: { type: 'string' },
    finalUrl: { type: ['string', 'null'] },
    bucket: { type: 'string' },
    objectKey: { type: 'string' },
    sha256: { type: ['string', 'null'] },
    size: { type: ['integer', 'null'] },
    capturedAt: { type: 'string', format: 'date-time' },
    indexedAt: { type: ['string', 'null'], format: 'date-time' },
  },
  required: ['id', 'taskId', 'url', 'finalUrl', 'bucket', 'objectKey', 'sha256', 'size', 'capturedAt', 'indexedAt'],
  additionalProperties: false,
} as const;

export default async function archiveRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { db, fga } = opts.deps;
  // a presigned GET signing only `host`, so a plain HTTP client can use it
  const signUrl = createUrlSigner(opts.deps.config.s3);

  app.post<{ Params: { id: string } }>(
    '/api/archives/:id/url',
    {
      schema: {
        summary: 'A short-lived signed URL for one archive',
        description: 'can_view is checked at HIGHER_CONSISTENCY right before signing. An unknown id and one you may not see give the same 404.',
        tags: ['archives'],
        params: uuidParam,
        body: noBody,
        response: {
          200: {
            type: 'object',
            properties: { url: { type: 'string' }, expiresIn: { type: 'integer' } },
            required: ['url', 'expiresIn'],
            additionalProperties: false,
          },
          ...errorResponses,
          ...notFoundResponse,
        },
      },
    },
    async (request) => {
      const identity = requireIdentity(request);
      const id = request.params.id.toLowerCase();
      // The decision and the row are both always asked for (concurrently): "not allowed" and "does
      // not exist" take the same path and the same time, and give the same 404.
      const [allowed, archive] = await Promise.all([canView(fga, identity, id), findArchive(db, id)]);
      if (!allowed || archive === undefined) throw new NotFoundError();
      const url = await signUrl(archive.bucket, archive.object_key, SIGNED_URL_TTL_SECONDS);
      request.log.info({ archiveId: id, subject: identity.subject }, 'signed archive url');
      return { url, expiresIn: SIGNED_URL_TTL_SECONDS };
    },
  );

  app.get<{ Querystring: { before?: string; limit: number } }>(
    '/api/archives',
    {
      schema: {
        summary: 'The archives you may see, newest first',
        description: 'Pass the capturedAt of the last row as `before` for the next page. Unknown query parameters are dropped.',
        tags: ['archives'],
        querystring: {
          type: 'object',
          properties: {
            before: { type: 'string', format: 'date-time', maxLength: 64, description: 'ISO 8601 timestamp: only archives captured strictly before it' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE },
          },
          additionalProperties: false,
        },
        response: {
          200: { type: 'array', items: archiveSchema },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const identity = requireIdentity(request);
      const { before, limit } = request.query;
      const beforeDate = before === undefined ? undefined : new Date(before);
      if (beforeDate !== undefined && Number.isNaN(beforeDate.getTime())) {
        throw new BadRequestError('invalid request', { details: [{ field: 'querystring.before', message: 'must be an ISO 8601 timestamp' }] });
      }
      const { rows, candidatesRead, chunks } = await fillPage(
        (after, size) => archiveCandidates(db, { before: after, limit: size }),
        async (chunk) => viewableArchives(fga, identity, chunk.map((a) => a.id)),
        { before: beforeDate, limit },
      );
      request.log.debug({ candidatesRead, chunks, returned: rows.length }, 'archive page');
      return rows.map(archiveView);
    },
  );
}
