// POST /api/crawls/:id/index and GET /api/search
import Type from 'typebox';
import { MAX_RESULT_WINDOW } from '../../search/query.ts';

export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 100;

export const IndexResult = Type.Object(
  {
    indexed: Type.Integer({ description: 'archives indexed by this call' }),
    pages: Type.Integer({ description: 'pages indexed from them' }),
    failed: Type.Integer({ description: 'archives that could not be read or indexed; they stay unindexed and are tried again next time' }),
  },
  { additionalProperties: false },
);

export const SearchQuery = Type.Object(
  {
    q: Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SEARCH_LIMIT, default: DEFAULT_SEARCH_LIMIT })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_RESULT_WINDOW - 1, default: 0 })),
  },
  { additionalProperties: false },
);

export const SearchHit = Type.Object(
  {
    archiveId: Type.String({ format: 'uuid' }),
    objectKey: Type.String(),
    url: Type.String(),
    title: Type.Optional(Type.String({ description: 'as pages/pages.jsonl has it; absent when the page line has none' })),
    textWithheld: Type.Optional(
      Type.String({
        description:
          "BrowserHive's DocumentWithheld (url-policy, content-type, no-archive, deny, unattributed): the body was not kept. Absent when the text is simply what was captured, even if empty",
      }),
    ),
    capturedAt: Type.String({ format: 'date-time' }),
    ts: Type.Optional(Type.String({ description: "the page line's own timestamp" })),
    score: Type.Number(),
    snippet: Type.Optional(Type.String({ description: 'plain text around the match, when the text matched' })),
  },
  { additionalProperties: false },
);

export const SearchAnswer = Type.Object(
  {
    hits: Type.Array(SearchHit),
    total: Type.Integer({ description: "the index's raw count of matching pages, before authorization" }),
    nextOffset: Type.Optional(
      Type.Integer({
        description: `pass as offset for the next page (a position in the index's own order, past every hit this page read); absent when no hit is left, or when it would pass ${MAX_RESULT_WINDOW}`,
      }),
    ),
  },
  { additionalProperties: false },
);
