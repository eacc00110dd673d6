// Clients close themselves with what owns them: the API's object-store client with app.close(),
// admission's object reader with its close(). Observed on the wire: both talk to the real
// SeaweedFS through a TCP forwarder that counts open connections, and a keep-alive connection
// left open after the close would still be counted.
import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { HeadBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
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

  it('a client the caller passed stays open: it is the caller’s to close', async () => {
    const db = createDb(config.databaseUrl);
    const s3 = createS3(config.s3);
    const app = await buildApp({ config, db, fga: createFgaClient(config.fga), s3 }, { logger: false });
    try {
      await app.close();
      const head = await s3.send(new HeadBucketCommand({ Bucket: config.s3.bucket }));
      expect(head.$metadata.httpStatusCode).toBe(200);
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
