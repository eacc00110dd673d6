// Archives as the API serves them: signing (the only enforcement point: can_view at
// HIGHER_CONSISTENCY immediately before the URL is signed), the screenshot's URL, deletion, and
// the list (archive-listing.ts). The routes read the request, call this and reply. An unknown id
// and one the caller may not see take the same path and give the same 404.
import type { S3Client } from '@aws-sdk/client-s3';
import type { OpenFgaClient } from '@openfga/sdk';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/connect.ts';
import { createCoalescer } from '../../domain/coalescer.ts';
import type { PageCursor } from '../../domain/cursor.ts';
import type { Identity } from '../../domain/identity.ts';
import { canDelete, canView } from '../../fga/authorize.ts';
import { deleteArchive } from '../../ledger/delete-archive.ts';
import { requiredArchives } from '../../store/archive-requires.ts';
import { archiveLocations, archiveThumbnail, findArchive } from '../../store/archives.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../errors.ts';
import type { SearchIndex } from '../../search/client.ts';
import type { UrlSigner } from '../presign.ts';
import { listArchives, type ArchivePage } from './archive-listing.ts';

/** A signed URL cannot be revoked: its lifetime is the gap between removing access and access ending. */
export const SIGNED_URL_TTL_SECONDS = 300;
const SIGNING_ROWS_PER_QUERY = 50;

export interface ArchiveServiceDeps {
  db: Db;
  fga: OpenFgaClient;
  s3: S3Client;
  /** a presigned GET signing only `host`, so a plain HTTP client can use it */
  signer: UrlSigner;
  /** present when search is configured: a deleted archive's pages leave the index */
  search?: SearchIndex;
}

export interface RequiredUrls {
  requires?: { id: string; objectKey: string; url: string }[];
  withheld?: number;
}
export type SignedArchiveUrl = { url: string; expiresIn: number } & RequiredUrls;

export interface ArchiveService {
  /** The archive's signed URL, with those of the archives it requires; 404 unless can_view. */
  signedUrl(identity: Identity, id: string, log: FastifyBaseLogger): Promise<SignedArchiveUrl>;
  /** Its screenshot's signed URL; 404 when unknown, not viewable or without one. */
  thumbnailUrl(identity: Identity, id: string): Promise<{ url: string; expiresIn: number }>;
  /** Deletes it: 404 unless viewable, 403 unless deletable, 409 while others require it. */
  remove(identity: Identity, id: string, log: FastifyBaseLogger): Promise<{ id: string; deleted: true; objectDeleted: boolean }>;
  /** One page of the archives the caller may see, newest first. */
  list(identity: Identity, page: { cursor: PageCursor | undefined; limit: number }): Promise<ArchivePage>;
}

/**
 * The signed URLs of the archives `id` requires. One the caller may not see, or that is not in the
 * ledger, is not signed and not named: it only counts in `withheld` (a 404 of its own would tell
 * an outsider holding a share of this archive which ids exist).
 */
export async function signRequired(
  deps: Pick<ArchiveServiceDeps, 'db' | 'fga' | 'signer'>,
  identity: Identity,
  id: string,
  ttlSeconds: number,
): Promise<RequiredUrls> {
  const { found, unresolved } = await requiredArchives(deps.db, id);
  if (found.length === 0 && unresolved === 0) return {};
  const allowed = await Promise.all(found.map((a) => canView(deps.fga, identity, a.id)));
  const visible = found.filter((_, i) => allowed[i]);
  const requires = await Promise.all(
    visible.map(async (a) => ({ id: a.id, objectKey: a.objectKey, url: await deps.signer(a.bucket, a.objectKey, ttlSeconds, a.objectVersion) })),
  );
  const withheld = found.length - visible.length + unresolved;
  return { requires, ...(withheld > 0 ? { withheld } : {}) };
}

function requiredByConflict(id: string, by: { id: string; url: string; objectKey: string }[]): ConflictError {
  return new ConflictError(
    `archive ${id} is required by ${by.length} other archive(s): ${by.map((a) => a.id).join(', ')} — their revisit records refer to payloads stored in it; delete those first`,
    { requiredBy: by },
  );
}

export function createArchiveService(deps: ArchiveServiceDeps): ArchiveService {
  const { db, fga, s3, signer, search } = deps;
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

  return {
    async signedUrl(identity, id, log) {
      // The decision and the row are both always asked for (concurrently): "not allowed" and "does
      // not exist" take the same path and the same time, and give the same 404.
      const [allowed, archive] = await Promise.all([canView(fga, identity, id), archiveLocation(id)]);
      if (!allowed || archive === undefined) throw new NotFoundError();
      const url = await signer(archive.bucket, archive.object_key, SIGNED_URL_TTL_SECONDS, archive.object_version);
      // most archives require nothing: their row said so, and no second query is made
      const required = archive.requires ? await signRequired(deps, identity, id, SIGNED_URL_TTL_SECONDS) : {};
      log.info({ archiveId: id, subject: identity.subject, requires: required.requires?.length ?? 0, withheld: required.withheld ?? 0 }, 'signed archive url');
      return { url, expiresIn: SIGNED_URL_TTL_SECONDS, ...required };
    },

    async thumbnailUrl(identity, id) {
      const [allowed, thumbnail] = await Promise.all([canView(fga, identity, id), archiveThumbnail(db, id)]);
      if (!allowed || thumbnail === undefined) throw new NotFoundError();
      return { url: await signer(thumbnail.bucket, thumbnail.key, SIGNED_URL_TTL_SECONDS, thumbnail.versionId), expiresIn: SIGNED_URL_TTL_SECONDS };
    },

    async remove(identity, id, log) {
      const [viewable, deletable, row] = await Promise.all([canView(fga, identity, id), canDelete(fga, identity, id), findArchive(db, id)]);
      if (!viewable || row === undefined) throw new NotFoundError();
      if (!deletable) throw new ForbiddenError('you may view this archive but not delete it: only the owner of its crawl may');
      const outcome = await deleteArchive({ db, s3, fga, ...(search !== undefined ? { search } : {}), log: (m) => log.warn(m) }, id, identity.subject);
      if (outcome.kind === 'missing') throw new NotFoundError();
      if (outcome.kind === 'required') throw requiredByConflict(id, outcome.by);
      log.info({ archiveId: id, subject: identity.subject }, 'deleted archive');
      return { id, deleted: true as const, objectDeleted: outcome.objectDeleted };
    },

    list: (identity, page) => listArchives(deps, identity, page),
  };
}
