// POST /api/archives/:id/thumbnail-url: the archive's screenshot (the capture's webp or png), signed
// as the WACZ is — can_view at HIGHER_CONSISTENCY right before signing, for as short a time — so
// the picker can show it beside the row. An unknown archive, one you may not view and one without
// a screenshot all give the same 404.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { NotFoundError } from '../../domain/errors.ts';
import { canView } from '../../fga/authorize.ts';
import { archiveThumbnail } from '../../store/archives.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { SignedUrl } from '../schemas/archives.ts';
import { errorResponses, NoBody, notFoundResponse, UuidParams } from '../schemas/common.ts';
import { SIGNED_URL_TTL_SECONDS } from './archives.ts';

const archiveThumbnailRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, opts) => {
  const { db, fga, signer } = opts.deps;
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
    async (request) => {
      const identity = requireIdentity(request);
      const id = request.params.id.toLowerCase();
      const [allowed, thumbnail] = await Promise.all([canView(fga, identity, id), archiveThumbnail(db, id)]);
      if (!allowed || thumbnail === undefined) throw new NotFoundError();
      return { url: await signer(thumbnail.bucket, thumbnail.key, SIGNED_URL_TTL_SECONDS), expiresIn: SIGNED_URL_TTL_SECONDS };
    },
  );
};

export default archiveThumbnailRoutes;
