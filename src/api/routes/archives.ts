// The two archive endpoints. Signing is the only enforcement point: can_view at
// HIGHER_CONSISTENCY immediately before the URL is signed. The list only decides what is shown
// (one BatchCheck per chunk of candidates at MINIMIZE_LATENCY, so OpenFGA's caches may answer).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { cursorQuery, parseCursor } from '../../domain/cursor.ts';
import { createCoalescer } from '../../domain/coalescer.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { scanPage } from '../../domain/list-scan.ts';
import { canView, reachableObjects, viewableArchives } from '../../fga/authorize.ts';
import { signRequired } from './archive-requires.ts';
import { archiveCandidates, archiveLocations, archiveView, type CandidateScope } from '../../store/archives.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { ArchiveList, ArchiveListQuery, DEFAULT_PAGE, MAX_EXAMINED, SignedUrl } from '../schemas/archives.ts';
import { errorResponses, NoBody, notFoundResponse, UuidParams } from '../schemas/common.ts';

export { DEFAULT_PAGE, MAX_EXAMINED, MAX_PAGE } from '../schemas/archives.ts';

/** A signed URL cannot be revoked: its lifetime is the gap between removing access and access ending. */
export const SIGNED_URL_TTL_SECONDS = 300;
const SIGNING_ROWS_PER_QUERY = 50;

const archiveRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, opts) => {
  const { db, fga } = opts.deps;
  // a presigned GET signing only `host`, so a plain HTTP client can use it
  const signUrl = opts.deps.signer;
  // Each signing request's row, looked up in one query with the others in flight (as its decision
  // is asked in one BatchCheck): read after the request arrived, never cached, so an archive
  // deleted a moment ago is not found.
  const archiveLocation = createCoalescer(
    async (ids: string[]) => {
      const found = await archiveLocations(db, ids);
      return ids.map((id) => found.get(id));
    },
    { maxBatch: SIGNING_ROWS_PER_QUERY, maxInFlight: 2 },
  );

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
    async (request) => {
      const identity = requireIdentity(request);
      const id = request.params.id.toLowerCase();
      // The decision and the row are both always asked for (concurrently): "not allowed" and "does
      // not exist" take the same path and the same time, and give the same 404.
      const [allowed, archive] = await Promise.all([canView(fga, identity, id), archiveLocation(id)]);
      if (!allowed || archive === undefined) throw new NotFoundError();
      const url = await signUrl(archive.bucket, archive.object_key, SIGNED_URL_TTL_SECONDS);
      const required = await signRequired(opts.deps, identity, id, SIGNED_URL_TTL_SECONDS);
      request.log.info(
        { archiveId: id, subject: identity.subject, requires: required.requires?.length ?? 0, withheld: required.withheld ?? 0 },
        'signed archive url',
      );
      return { url, expiresIn: SIGNED_URL_TTL_SECONDS, ...required };
    },
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
      const identity = requireIdentity(request);
      const cursor = parseCursor(request.query);
      const { limit = DEFAULT_PAGE } = request.query;
      // Callers who reach few crawls: candidates from OpenFGA (ListObjects), intersected in SQL;
      // otherwise every archive is a candidate. Either way each chunk is checked (can_view,
      // cached), so the list shows exactly what OpenFGA allows.
      const reach = await reachableObjects(fga, identity);
      const scope: CandidateScope = reach === undefined ? { kind: 'all' } : { kind: 'reachable', ...reach };
      const page = await scanPage(
        (at, size) => archiveCandidates(db, { ...(at ? { cursor: at } : {}), limit: size, scope }),
        async (chunk) =>
          viewableArchives(
            fga,
            identity,
            chunk.map((a) => a.id),
          ),
        (a) => ({ at: a.captured_at, id: a.id }),
        { ...(cursor ? { cursor } : {}), limit, maxExamined: MAX_EXAMINED, ...(scope.kind === 'reachable' ? { firstChunk: limit } : {}) },
      );
      request.log.debug(
        { scope: scope.kind, examined: page.examined, chunks: page.chunks, returned: page.rows.length, stoppedEarly: page.stoppedEarly },
        'archive page',
      );
      if (page.next !== undefined) {
        reply.header('link', `</api/archives?${new URLSearchParams({ ...cursorQuery(page.next), limit: String(limit) })}>; rel="next"`);
      }
      reply.header('x-stopped-early', String(page.stoppedEarly));
      return page.rows.map(archiveView);
    },
  );
};

export default archiveRoutes;
