// JSON bodies as fastify parses them (its default parser: prototype poisoning refused), and one
// thing more: a body holding U+0000 in any string or key is a 400 naming the field, before a write
// fails on it (src/domain/nul.ts). JSON can only carry the character as the escape \u0000, so a
// body without that text is not walked.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { BadRequestError } from '../domain/errors.ts';
import { nulPath } from '../domain/nul.ts';

export const jsonBodyPlugin = fp(async (app: FastifyInstance) => {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    void parse(request, body as string, (err, value) => {
      if (err) return done(err, undefined);
      const at = (body as string).includes('\\u0000') ? nulPath(value) : undefined;
      if (at === undefined) return done(null, value);
      done(new BadRequestError('invalid request', { details: [{ field: ['body', ...at].join('.'), message: 'must not contain a NUL character (U+0000)' }] }), undefined);
    });
  });
});
