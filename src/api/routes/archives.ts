// The two archive endpoints. Signing is the only enforcement point: can_view at
// HIGHER_CONSISTENCY immediately before the URL is signed. The list only decides what is shown
// (one BatchCheck per chunk of candidates at MINIMIZE_LATENCY, so OpenFGA's caches may answer).
import type { FastifyInstance } from 'fastify';
import { cursorQuery, cursorQuerySchema, parseCursor } from '../../domain/cursor.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { scanPage } from '../../domain/list-scan.ts';
import { canView, reachableObjects, viewableArchives } from '../../fga/authorize.ts';
import { archiveCandidates, archiveLocation, archiveView, type CandidateScope } from '../../store/archives.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorResponses, noBody, notFoundResponse, uuidParam } from '../schemas.ts';

/** A signed URL cannot be revoked: its lifetime is the gap between removing access and access ending. */
export const SIGNED_URL_TTL_SECONDS = 300;
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;
/** Candidates one list request examines at most (issue 12: a caller who sees little cannot walk the table). */
export const MAX_EXAMINED = 1000;

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
  const signUrl = opts.deps.signer;

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
      const [allowed, archive] = await Promise.all([canView(fga, identity, id), archiveLocation(db, id)]);
      if (!allowed || archive === undefined) throw new NotFoundError();
      const url = await signUrl(archive.bucket, archive.object_key, SIGNED_URL_TTL_SECONDS);
      request.log.info({ archiveId: id, subject: identity.subject }, 'signed archive url');
      return { url, expiresIn: SIGNED_URL_TTL_SECONDS };
    },
  );

  app.get<{ Querystring: { before?: string; beforeId?: string; limit: number } }>(
    '/api/archives',
    {
      schema: {
        summary: 'The archives you may see, newest first',
        description:
          'Pass the capturedAt of the last row as `before`, and its id as `beforeId` so rows sharing that capturedAt are not skipped (or follow the `Link` header). ' +
          `One request examines at most ${MAX_EXAMINED} candidates: a page can hold fewer rows than \`limit\` with more to come, and then \`X-Stopped-Early: true\` says so and \`Link\` continues where it stopped. ` +
          'Unknown query parameters are dropped.',
        tags: ['archives'],
        querystring: {
          type: 'object',
          properties: {
            ...cursorQuerySchema('capturedAt'),
            limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE },
          },
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'array',
            items: archiveSchema,
            headers: {
              link: { type: 'string', description: 'rel="next": this list from where this page ended (before, beforeId, limit); absent when nothing is left' },
              'x-stopped-early': {
                type: 'string',
                enum: ['true', 'false'],
                description: `true when the page ended because ${MAX_EXAMINED} candidates were examined (or OpenFGA could not answer for the next ones in time), not because it was full or the list ended: follow Link for more`,
              },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const identity = requireIdentity(request);
      const cursor = parseCursor(request.query);
      const { limit } = request.query;
      // Callers who reach few crawls: candidates from OpenFGA (ListObjects), intersected in SQL;
      // otherwise every archive is a candidate. Either way each chunk is checked (can_view,
      // cached), so the list shows exactly what OpenFGA allows.
      const reach = await reachableObjects(fga, identity);
      const scope: CandidateScope = reach === undefined ? { kind: 'all' } : { kind: 'reachable', ...reach };
      const page = await scanPage(
        (at, size) => archiveCandidates(db, { ...(at ? { cursor: at } : {}), limit: size, scope }),
        async (chunk) => viewableArchives(fga, identity, chunk.map((a) => a.id)),
        (a) => ({ at: a.captured_at, id: a.id }),
        { ...(cursor ? { cursor } : {}), limit, maxExamined: MAX_EXAMINED, ...(scope.kind === 'reachable' ? { firstChunk: limit } : {}) },
      );
      request.log.debug({ scope: scope.kind, examined: page.examined, chunks: page.chunks, returned: page.rows.length, stoppedEarly: page.stoppedEarly }, 'archive page');
      if (page.next !== undefined) {
        reply.header('link', `</api/archives?${new URLSearchParams({ ...cursorQuery(page.next), limit: String(limit) })}>; rel="next"`);
      }
      reply.header('x-stopped-early', String(page.stoppedEarly));
      return page.rows.map(archiveView);
    },
  );
}
