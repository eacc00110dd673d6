// App plugin: the ledger's database pool. A pool the caller passed stays the caller's; without
// one, the app opens its own from the configuration and ends it on app.close(), once the requests
// in flight have finished.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config/env.ts';
import { createDb, type Db } from '../../db/connect.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** the database the app's services use, given or opened (plugins/db.ts) */
    db: Db;
  }
}

export const dbPlugin = fp(
  async (app: FastifyInstance, opts: { config: Config; given: Db | undefined }) => {
    const made = opts.given === undefined ? createDb(opts.config.databaseUrl) : undefined;
    app.decorate('db', opts.given ?? made!);
    app.addHook('onClose', async () => {
      await made?.destroy();
    });
  },
  { name: 'capture-ledger-db' },
);
