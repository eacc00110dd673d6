// App plugin: the object-store and search clients. Those the caller passed stay the caller's;
// those missing are made here from the configuration, and closed by the app itself on
// app.close() (after the requests in flight have finished). The pool and the Temporal connection
// are plugins of their own, alike (plugins/db.ts, plugins/temporal.ts).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config/env.ts';
import { createS3 } from '../../s3/client.ts';
import { createSearchIndex } from '../../search/client.ts';
import type { AppClients } from '../deps.ts';
import { createUrlSigner } from '../presign.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** the clients the app's services use, given or made (plugins/clients.ts) */
    clients: AppClients;
  }
}

/** The clients not given, made from the configuration. */
function missingClients(config: Config, given: Partial<AppClients>): Partial<AppClients> {
  const made: Partial<AppClients> = {};
  if (given.s3 === undefined) made.s3 = createS3(config.s3);
  if (given.signer === undefined) made.signer = createUrlSigner(config.s3);
  if (!('search' in given) && config.opensearch !== undefined) made.search = createSearchIndex(config.opensearch);
  return made;
}

export const clientsPlugin = fp(
  async (app: FastifyInstance, opts: { config: Config; given: Partial<AppClients> }) => {
    const { given } = opts;
    const made = missingClients(opts.config, given);
    app.decorate('clients', { s3: given.s3 ?? made.s3!, signer: given.signer ?? made.signer!, search: 'search' in given ? given.search : made.search });
    app.addHook('onClose', async () => {
      made.s3?.destroy();
      await made.search?.client.close();
    });
  },
  { name: 'capture-ledger-clients' },
);
