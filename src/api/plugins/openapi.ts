// External plugin: the OpenAPI document. @fastify/swagger collects every route's schema, after
// documentServerAnswers has added the answers given before any handler (421 431 …) to each.
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { documentServerAnswers } from '../server-answers.ts';

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  documentServerAnswers(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'capture-ledger', version: '0.1.0', description: 'Archive ledger, crawls, and short-lived signed URLs.' },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          devSubject: { type: 'apiKey', in: 'header', name: 'X-Capture-ledger-Subject' },
          devOrganizations: { type: 'apiKey', in: 'header', name: 'X-Capture-ledger-Organizations' },
        },
      },
      security: [{ bearer: [] }, { devSubject: [], devOrganizations: [] }],
    },
  });
}
