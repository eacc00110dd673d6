// JSON bodies as fastify parses them (its default parser: prototype poisoning refused), and one
// thing more: a body holding U+0000 in any string or key is a 400 naming the field, before a write
// fails on it (src/domain/nul.ts).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { BadRequestError } from './errors.ts';
import { nulPathInJson } from '../domain/nul.ts';

export const jsonBodyPlugin = fp(async (app: FastifyInstance) => {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    void parse(request, body as string, (err, value) => {
      if (err) return done(err, undefined);
      const at = nulPathInJson(body as string, value);
      if (at === undefined) return done(null, value);
      done(
        new BadRequestError('invalid request', { details: [{ field: ['body', ...at].join('.'), message: 'must not contain a NUL character (U+0000)' }] }),
        undefined,
      );
    });
  });
});
