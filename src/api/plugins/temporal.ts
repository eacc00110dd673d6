// App plugin: the Temporal client the crawl routes use. A client the caller passed stays the
// caller's. Asked to connect (`npm run api`), the app opens its own connection when crawls are
// configured (both webhook settings) and closes it on app.close(). The connection is lazy: the
// API starts while Temporal is down, and a crawl started then is a 503.
import type { Client as TemporalClient } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config/env.ts';
import { createTemporalClient } from '../../temporal/client.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** the Temporal client, given or connected (plugins/temporal.ts); undefined: no crawl routes */
    temporal: TemporalClient | undefined;
  }
}

export interface TemporalPluginOptions {
  config: Config;
  given: TemporalClient | undefined;
  /** open a connection of the app's own when none is given and crawls are configured */
  connect: boolean;
}

export const temporalPlugin = fp(
  async (app: FastifyInstance, opts: TemporalPluginOptions) => {
    const wanted = opts.given === undefined && opts.connect && opts.config.crawl.webhook !== undefined;
    const made = wanted ? await createTemporalClient(opts.config.temporal) : undefined;
    app.decorate('temporal', opts.given ?? made?.client);
    app.addHook('onClose', async () => {
      await made?.close();
    });
  },
  { name: 'capture-ledger-temporal' },
);
