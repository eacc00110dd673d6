// The Temporal client the API (and operators' commands) use. Lazy by default: the API starts
// while Temporal is down, and a crawl started then fails with 503 instead of the whole API
// refusing to start.
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config/env.ts';

export interface TemporalHandle {
  client: Client;
  connection: Connection;
  close(): Promise<void>;
}

export async function createTemporalClient(cfg: Config['temporal'], opts: { lazy?: boolean } = {}): Promise<TemporalHandle> {
  const connection = opts.lazy === false ? await Connection.connect({ address: cfg.address }) : Connection.lazy({ address: cfg.address });
  const client = new Client({ connection, namespace: cfg.namespace });
  return { client, connection, close: () => connection.close() };
}
