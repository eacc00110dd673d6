// App plugin: what every request gets, whatever route answers it.
import type { FastifyInstance } from 'fastify';
import { useHostCheck } from '../../http/host-check.ts';

export function useRequestHooks(app: FastifyInstance, opts: { publicUrl: string }): void {
  // first of all hooks: a request for another host name (DNS rebinding) is 421 before anything runs
  useHostCheck(app, { publicUrls: [opts.publicUrl] });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // one log line per request (fastify's default writes two), with the request id as reqId
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ method: request.method, url: request.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
  });
}
