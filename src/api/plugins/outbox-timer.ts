// Delivers queued outbox tuples every few seconds while the API runs (the crawl workflow and its
// `outbox-drain` schedule deliver too; delivery is idempotent, so overlapping drains are harmless).
// One drain at a time; a failing drain is logged and retried on the next tick; closing the app
// waits for a drain in flight.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export interface OutboxTimerOptions {
  intervalMs: number;
  drain: () => Promise<{ delivered: number; failed: number; remaining: number; unavailable?: string }>;
}

export const outboxTimerPlugin = fp(
  async function outboxTimer(app: FastifyInstance, opts: OutboxTimerOptions) {
    let running: Promise<void> | undefined;
    let closed = false;
    const tick = (): void => {
      if (running !== undefined || closed) return;
      running = opts
        .drain()
        .then((r) => {
          if (r.delivered > 0 || r.failed > 0 || r.unavailable !== undefined) app.log.info({ outbox: r }, 'outbox drained');
        })
        .catch((err: unknown) => {
          app.log.error({ err }, 'outbox drain failed');
        })
        .finally(() => {
          running = undefined;
        });
    };
    let timer: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      timer = setInterval(tick, opts.intervalMs);
      timer.unref();
      tick();
    });
    app.addHook('onClose', async () => {
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      await running;
    });
  },
  { name: 'outbox-timer' },
);
