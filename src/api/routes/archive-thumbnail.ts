// POST /api/archives/:id/thumbnail-url: the archive's screenshot (the capture's webp or png), signed
// as the WACZ is — can_view at HIGHER_CONSISTENCY right before signing, for as short a time — so
// the picker can show it beside the row. An unknown archive, one you may not view and one without
// a screenshot all give the same 404.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireIdentity } from '../identity.ts';
import { SignedUrl } from '../schemas/archives.ts';
import { errorResponses, NoBody, notFoundResponse, UuidParams } from '../schemas/common.ts';
import { SIGNED_URL_TTL_SECONDS, type ArchiveService } from '../services/archives.ts';

const archiveThumbnailRoutes: FastifyPluginAsyncTypebox<{ archives: ArchiveService }> = async (app, { archives }) => {
  app.post(
    '/api/archives/:id/thumbnail-url',
    {
      schema: {
        summary: "A short-lived signed URL for one archive's screenshot",
        description: `The capture's webp (else png) screenshot, signed for ${SIGNED_URL_TTL_SECONDS} s after can_view at HIGHER_CONSISTENCY, as for the WACZ. An unknown id, one you may not see, and an archive without a screenshot give the same 404.`,
        tags: ['archives'],
        params: UuidParams,
        body: NoBody,
        response: { 200: SignedUrl, ...errorResponses, ...notFoundResponse },
      },
    },
    async (request) => archives.thumbnailUrl(requireIdentity(request), request.params.id.toLowerCase()),
  );
};

export default archiveThumbnailRoutes;
