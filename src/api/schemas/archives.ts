// POST /api/archives/:id/url and GET /api/archives
import Type from 'typebox';
import { CursorQuery, Nullable } from './common.ts';

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;
/** Candidates one list request examines at most (issue 12: a caller who sees little cannot walk the table). */
export const MAX_EXAMINED = 1000;

export const RequiredSignedUrl = Type.Object(
  { id: Type.String({ format: 'uuid' }), objectKey: Type.String(), url: Type.String() },
  { additionalProperties: false },
);

export const SignedUrl = Type.Object(
  {
    url: Type.String(),
    expiresIn: Type.Integer(),
    requires: Type.Optional(
      Type.Array(RequiredSignedUrl, {
        description:
          'the archives this one requires (its revisit records refer to payloads stored there), each signed after its own can_view: replay loads them with it',
      }),
    ),
    withheld: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'required archives not signed: not in the ledger, or not yours to see (the two are indistinguishable); replay of what they hold is missing',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ArchiveDeleted = Type.Object(
  { id: Type.String({ format: 'uuid' }), deleted: Type.Literal(true), objectDeleted: Type.Boolean() },
  { additionalProperties: false },
);

export const Archive = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    taskId: Type.String(),
    url: Type.String(),
    finalUrl: Nullable(Type.String()),
    bucket: Type.String(),
    objectKey: Type.String(),
    sha256: Nullable(Type.String()),
    size: Nullable(Type.Integer()),
    capturedAt: Type.String({ format: 'date-time' }),
    indexedAt: Nullable(Type.String({ format: 'date-time' })),
    title: Nullable(Type.String({ description: "the page's title as captured" })),
    thumbnail: Nullable(
      Type.Unsafe<'png' | 'webp'>({
        type: 'string',
        enum: ['png', 'webp'],
        description: 'the format of its screenshot, when the capture made one: POST /api/archives/{id}/thumbnail-url signs it',
      }),
    ),
    qa: Nullable(
      Type.Object(
        {
          verdict: Type.Unsafe<'good' | 'review'>({ type: 'string', enum: ['good', 'review'] }),
          attempts: Type.Integer({ minimum: 1 }),
          pixels: Type.Number(),
          text: Type.Number(),
          misses: Type.Integer({ minimum: 0 }),
        },
        {
          additionalProperties: false,
          description:
            "the capture's quality check (the crawl's qa): the kept attempt's verdict and scores against its own replay — share of viewport pixels equal, word overlap of the text, requests the replay made that the capture had not recorded — and how many attempts were made",
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const ArchiveListQuery = Type.Object(
  { ...CursorQuery('capturedAt'), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE })) },
  { additionalProperties: false },
);

/** The list, with the headers that continue it. */
export const ArchiveList = Type.Array(Archive, {
  headers: {
    link: { type: 'string', description: 'rel="next": this list from where this page ended (before, beforeId, limit); absent when nothing is left' },
    'x-stopped-early': {
      type: 'string',
      enum: ['true', 'false'],
      description: `true when the page ended because ${MAX_EXAMINED} candidates were examined (or OpenFGA could not answer for the next ones in time), not because it was full or the list ended: follow Link for more`,
    },
  },
});
