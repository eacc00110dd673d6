// Clients close themselves with what owns them: the API's object-store client, its database pool
// and its Temporal connection with app.close(), admission's object reader with its close().
// Observed on the wire: each talks to the real SeaweedFS, Postgres or Temporal through a TCP
// forwarder that counts open connections, and a connection left open after the close would still
// be counted.
import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { HeadBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.ts';
import { createDb } from '../../src/db/connect.ts';
import { createFgaClient } from '../../src/fga/client.ts';
import { createS3 } from '../../src/s3/client.ts';
import { createObjectReader } from '../../src/s3/object-reader.ts';
import type { Config } from '../../src/config/env.ts';
import { testConfig } from '../support/config.ts';

interface Forwarder {
  url: string;
  open: Set<Socket>;
  /** settles when no connection is open */
  drained(): Promise<void>;
  close(): Promise<void>;
}

async function startForwarder(target: URL): Promise<Forwarder> {
  const open = new Set<Socket>();
  let waiters: (() => void)[] = [];
  const server: Server = createServer((client) => {
    open.add(client);
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      if (open.delete(client) && open.size === 0) for (const w of waiters.splice(0)) w();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    open,
    drained: () => (open.size === 0 ? Promise.resolve() : new Promise<void>((r) => (waiters = [...waiters, r]))),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let config: Config;
let forwarder: Forwarder;

beforeAll(async () => {
  const base = testConfig();
  forwarder = await startForwarder(new URL(base.s3.endpoint));
  config = { ...base, s3: { ...base.s3, endpoint: forwarder.url }, opensearch: undefined };
});

afterAll(async () => {
  await forwarder.close();
});

describe('clients close themselves', () => {
  it("the app's own S3 client: its keep-alive connection is open after a request and closed by app.close()", async () => {
    const db = createDb(config.databaseUrl);
    const app = await buildApp({ config, db, fga: createFgaClient(config.fga) }, { logger: false });
    try {
      const head = await app.clients.s3.send(new HeadBucketCommand({ Bucket: config.s3.bucket }));
      expect(head.$metadata.httpStatusCode).toBe(200);
      expect(forwarder.open.size).toBe(1);
      await app.close();
      await forwarder.drained();
      expect(forwarder.open.size).toBe(0);
    } finally {
      await db.destroy();
    }
  });

  it("the app's own database pool: its connection is open after a query and closed by app.close()", async () => {
    const postgres = await startForwarder(new URL(config.databaseUrl));
    const databaseUrl = new URL(config.databaseUrl);
    databaseUrl.host = new URL(postgres.url).host;
    try {
      const app = await buildApp({ config: { ...config, databaseUrl: databaseUrl.href }, fga: createFgaClient(config.fga) }, { logger: false });
      expect(app.temporal).toBeUndefined();
      await sql`SELECT 1`.execute(app.db);
      expect(postgres.open.size).toBe(1);
      await app.close();
      await postgres.drained();
      // ended, not idle: the pool's idle timeout would drain the forwarder too, and then reconnect
      await expect(sql`SELECT 1`.execute(app.db)).rejects.toThrow(/destroyed/);
      expect(postgres.open.size).toBe(0);
    } finally {
      await postgres.close();
    }
  });

  it("the app's own Temporal connection (asked to connect, crawls configured): open once used, closed by app.close()", async () => {
    expect(config.crawl.webhook).toBeDefined();
    const temporal = await startForwarder(new URL(`http://${config.temporal.address}`));
    const db = createDb(config.databaseUrl);
    try {
      const address = new URL(temporal.url).host;
      const app = await buildApp(
        { config: { ...config, temporal: { ...config.temporal, address } }, db, fga: createFgaClient(config.fga) },
        {
          logger: false,
          connectTemporal: true,
        },
      );
      await app.temporal!.connection.ensureConnected();
      expect(temporal.open.size).toBeGreaterThan(0);
      await app.close();
      await temporal.drained();
      expect(temporal.open.size).toBe(0);
    } finally {
      await db.destroy();
      await temporal.close();
    }
  });

  it('a client the caller passed stays open: it is the caller’s to close', async () => {
    const db = createDb(config.databaseUrl);
    const s3 = createS3(config.s3);
    const app = await buildApp({ config, db, fga: createFgaClient(config.fga), s3 }, { logger: false });
    try {
      await app.close();
      const head = await s3.send(new HeadBucketCommand({ Bucket: config.s3.bucket }));
      expect(head.$metadata.httpStatusCode).toBe(200);
      expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows).toEqual([{ one: 1 }]);
      expect(forwarder.open.size).toBe(1);
    } finally {
      s3.destroy();
      await db.destroy();
      await forwarder.drained();
    }
  });

  it('the object reader: close() ends its connection, and a read after it is unreadable without connecting', async () => {
    const key = `clients-close/${Date.now()}.json`;
    const writer = createS3(testConfig().s3);
    await writer.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: key, Body: '{"ok":true}' }));
    writer.destroy();
    const reader = createObjectReader(config.s3);
    expect(await reader.read(config.s3.bucket, key)).toEqual({ kind: 'ok', text: '{"ok":true}' });
    expect(forwarder.open.size).toBe(1);
    reader.close();
    await forwarder.drained();
    const after = await reader.read(config.s3.bucket, key);
    expect(after.kind).toBe('unreadable');
    expect(forwarder.open.size).toBe(0);
  });
});
