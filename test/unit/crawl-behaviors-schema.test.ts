// The crawl request's behaviorsSeconds and siteBehaviors, validated as the API validates a body
// (its Ajv options, its 400 details): a bad value is refused naming the field, a good one passes.
import { AjvCompiler } from '@fastify/ajv-compiler';
import { describe, expect, it } from 'vitest';
import { AJV_OPTIONS } from '../../src/api/app.ts';
import { validationDetails } from '../../src/api/error-handler.ts';
import { CrawlRequest } from '../../src/api/schemas/crawls.ts';
import { CRAWL_LIMITS } from '../../src/domain/crawl.ts';

// the compiler fastify builds the app's body validator with, with the app's options for bodies
const validate = AjvCompiler()({} as never, { customOptions: AJV_OPTIONS.body } as never)({
  schema: CrawlRequest,
  method: 'POST',
  url: '/api/crawls',
  httpPart: 'body',
} as never) as unknown as ((body: unknown) => boolean) & { errors?: unknown[] };

function details(body: unknown): { field: string; message: string }[] {
  if (validate(body)) return [];
  return validationDetails(validate.errors as never, 'body');
}

describe('POST /api/crawls body: behaviorsSeconds and siteBehaviors', () => {
  it('takes 0 (off), the default and the maximum, and either siteBehaviors', () => {
    for (const behaviorsSeconds of [0, 10, CRAWL_LIMITS.behaviorsSeconds]) expect(details({ seeds: ['https://a.test/'], behaviorsSeconds })).toEqual([]);
    for (const siteBehaviors of [true, false]) expect(details({ seeds: ['https://a.test/'], siteBehaviors })).toEqual([]);
  });

  it('refuses a negative, fractional, too large, string or null budget, naming behaviorsSeconds', () => {
    const cases: [unknown, RegExp][] = [
      [-1, />= 0/],
      [1.5, /integer/],
      [CRAWL_LIMITS.behaviorsSeconds + 1, new RegExp(`<= ${CRAWL_LIMITS.behaviorsSeconds}`)],
      ['10', /integer/],
      [null, /integer/],
    ];
    for (const [behaviorsSeconds, message] of cases) {
      const d = details({ seeds: ['https://a.test/'], behaviorsSeconds });
      expect(
        d.map((x) => x.field),
        JSON.stringify(behaviorsSeconds),
      ).toEqual(['body.behaviorsSeconds']);
      expect(d[0]!.message).toMatch(message);
    }
  });

  it('refuses a siteBehaviors that is not a boolean, naming it', () => {
    expect(details({ seeds: ['https://a.test/'], siteBehaviors: 'no' })).toEqual([{ field: 'body.siteBehaviors', message: 'must be boolean' }]);
  });
});
