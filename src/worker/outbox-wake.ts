// The worker's one outbox drain, woken by the writes themselves. Every statement that queues
// outbox rows sends NOTIFY fga_outbox (trigger, migrations/0015_outbox_notify.sql), delivered
// when its transaction commits, whichever process wrote (the API creating a crawl, the worker
// admitting a level, fga:reconcile). This process LISTENs on its own connection and runs one
// drain at a time: notifications during a drain make exactly one more drain after it
// (src/domain/serial-wake.ts), so a burst of commits costs one or two drains, never one each.
// The crawl workflow no longer delivers tuples itself; the outbox-drain schedule (every minute)
// stays as the backstop for anything a lost connection or a down OpenFGA left queued.
//
// After connecting (and after every reconnect) it drains once, for rows queued while it was not
// listening. A drain that finds OpenFGA unavailable is tried again after a backoff (1 s doubling
// to 30 s), so an outage ends in a prompt delivery without waiting for the schedule.
import type { OpenFgaClient } from '@openfga/sdk';
import pg from 'pg';
import type { Db } from '../db/connect.ts';
import { serialWake } from '../domain/serial-wake.ts';
import { drainOutbox, type DrainResult } from '../fga/outbox.ts';

export const OUTBOX_CHANNEL = 'fga_outbox';

export interface OutboxWakeOptions {
  /** the database the LISTEN connection opens (the one `db` writes to) */
  databaseUrl: string;
  db: Db;
  fga: OpenFgaClient;
  log?: { info(msg: string, meta?: object): void; warn(msg: string, meta?: object): void };
  /** first and longest wait before a drain is tried again after OpenFGA (or Postgres) was unavailable */
  retryMs?: { first: number; max: number };
}

export interface OutboxWake {
  /** resolves once no drain is going and none is due (tests) */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const quiet = { info() {}, warn() {} };

export function startOutboxWake(opts: OutboxWakeOptions): OutboxWake {
  const log = opts.log ?? quiet;
  const retry = opts.retryMs ?? { first: 1000, max: 30_000 };
  let stopped = false;
  let backoff = retry.first;
  let retryTimer: NodeJS.Timeout | undefined;

  const afterDrain = (result: DrainResult | undefined, error?: unknown): void => {
    const unavailable = error !== undefined ? String((error as Error).message ?? error) : result?.unavailable;
    if (unavailable === undefined) {
      backoff = retry.first;
      if (result !== undefined && result.delivered + result.failed > 0) log.info('outbox drained', { ...result });
      return;
    }
    if (stopped) return;
    log.warn('outbox drain deferred', { error: unavailable, retryInMs: backoff });
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => runner.wake(), backoff);
    backoff = Math.min(retry.max, backoff * 2);
  };
  const runner = serialWake(async () => {
    try {
      afterDrain(await drainOutbox(opts.db, opts.fga));
    } catch (err) {
      afterDrain(undefined, err);
    }
  });
  const listener = listen(
    opts.databaseUrl,
    () => runner.wake(),
    log,
    () => stopped,
  );

  return {
    idle: () => runner.idle(),
    async stop() {
      stopped = true;
      clearTimeout(retryTimer);
      await listener.close();
      await runner.stop();
    },
  };
}

/**
 * LISTEN on a connection of its own, calling `wake` for every notification and once each time
 * the connection is (re)established; a lost connection is opened again after a second.
 */
function listen(databaseUrl: string, wake: () => void, log: NonNullable<OutboxWakeOptions['log']>, stopped: () => boolean): { close(): Promise<void> } {
  let client: pg.Client | undefined;
  let reconnect: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: databaseUrl });
    client = c;
    c.on('notification', wake);
    c.on('error', (err) => lost(c, err));
    c.on('end', () => lost(c, new Error('connection ended')));
    try {
      await c.connect();
      await c.query(`LISTEN ${OUTBOX_CHANNEL}`);
      wake();
    } catch (err) {
      lost(c, err as Error);
    }
  };
  const lost = (c: pg.Client, err: Error): void => {
    if (stopped() || client !== c) return;
    client = undefined;
    log.warn('outbox listener lost its connection; reconnecting', { error: err.message });
    c.end().catch(() => undefined);
    reconnect = setTimeout(() => void connect(), 1000);
  };
  void connect();
  return {
    async close() {
      clearTimeout(reconnect);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
