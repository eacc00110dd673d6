// Benchmark: delivering 10,000 queued tuples (archive parent tuples, as admission queues them) to
// OpenFGA with drainOutbox. Goal: over 1,000 tuples/s.
//
//   node bench/outbox.ts     (or npm run bench -- outbox)
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { drainOutbox, enqueueTuples } from '../src/fga/outbox.ts';
import { archiveTuples } from '../src/fga/tuples.ts';
import { createTestStore } from '../test/support/fga.ts';
import { benchConfig, createBenchDatabase, printLines, round } from './support-crawl.ts';

export async function run(opts: { tuples?: number } = {}): Promise<Record<string, unknown>[]> {
  const total = opts.tuples ?? 10_000;
  const base = benchConfig();
  const [bench, store] = await Promise.all([createBenchDatabase(base.databaseUrl), createTestStore()]);
  try {
    const job = randomUUID();
    for (let offset = 0; offset < total; offset += 2000) {
      const n = Math.min(2000, total - offset);
      await enqueueTuples(bench.db, Array.from({ length: n }, () => archiveTuples(randomUUID(), job)).flat());
    }
    const t = performance.now();
    const r = await drainOutbox(bench.db, store.client);
    const seconds = (performance.now() - t) / 1000;
    if (r.delivered !== total || r.remaining !== 0) throw new Error(`outbox bench: ${JSON.stringify(r)}`);
    const perSecond = round(total / seconds, 0);
    return [
      {
        bench: 'outbox',
        tuples: total,
        seconds: round(seconds, 2),
        tuplesPerSecond: perSecond,
        failed: r.failed,
        goal: '> 1000 tuples/s',
        met: perSecond > 1000,
      },
    ];
  } finally {
    await bench.drop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printLines(await run());
