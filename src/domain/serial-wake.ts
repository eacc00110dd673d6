// One run at a time, however often it is woken: a wake while idle starts a run at once; wakes
// during a run (any number of them) make exactly one more run after it, which then sees all that
// they announced. Nothing announced before a wake is ever left without a run that starts after it.

export interface SerialWake {
  wake(): void;
  /** resolves once no run is going and none is due */
  idle(): Promise<void>;
  /** no new runs; resolves when the current one has ended */
  stop(): Promise<void>;
}

/** `run` must not throw (a rejection is swallowed: the next wake runs again). */
export function serialWake(run: () => Promise<void>): SerialWake {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const loop = async (): Promise<void> => {
    try {
      do {
        again = false;
        await run().catch(() => undefined);
      } while (again && !stopped);
    } finally {
      running = undefined;
    }
  };
  return {
    wake() {
      if (stopped) return;
      if (running !== undefined) again = true;
      else running = loop();
    },
    async idle() {
      while (running !== undefined) await running;
    },
    async stop() {
      stopped = true;
      await running;
    },
  };
}
