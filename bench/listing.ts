// Benchmark: GET /api/archives, first page of 50, for a caller who may see 10% of 10,000 archives
// (every tenth row, so each candidate chunk is mostly filtered out). Goal: under 150 ms p50.
//
//   node bench/listing.ts     (or npm run bench -- listing)
import { pathToFileURL } from 'node:url';
import { drain, insertJob } from '../test/support/ledger.ts';
import { percentile, printLines, round } from './support-crawl.ts';
import { startBenchApi } from './support-api.ts';
import { archiveTuples } from '../src/fga/tuples.ts';
import { enqueueTuples } from '../src/fga/outbox.ts';
import { randomUUID } from 'node:crypto';

export async function run(opts: { archives?: number; visibleEvery?: number; samples?: number } = {}): Promise<Record<string, unknown>[]> {
  const total = opts.archives ?? 10_000;
  const every = opts.visibleEvery ?? 10;
  const samples = opts.samples ?? 60;
  const api = await startBenchApi();
  try {
    const seen = await insertJob(api.deps.db, { orgId: 'seen', submittedBy: 'sam' });
    const other = await insertJob(api.deps.db, { orgId: 'other', submittedBy: 'oscar' });
    const start = Date.now();
    for (let offset = 0; offset < total; offset += 1000) {
      const rows = Array.from({ length: Math.min(1000, total - offset) }, (_, k) => {
        const i = offset + k;
        return { id: randomUUID(), i, task_id: `bench-${i}`, bucket: api.deps.config.s3.bucket, object_key: `bench/${i}.wacz`, url: `https://bench.test/${i}`, final_url: null, sha256: null, size: null, provenance: '{}', captured_at: new Date(start - i * 1000) };
      });
      await api.deps.db.transaction().execute(async (trx) => {
        await trx.insertInto('archives').values(rows.map(({ i: _i, ...r }) => r)).execute();
        await enqueueTuples(trx, rows.flatMap((r) => archiveTuples(r.id, r.i % every === 0 ? seen : other)));
      });
    }
    await drain(api.deps.db, api.deps.fga);
    const headers = { 'x-capture-ledger-subject': 'vera', 'x-capture-ledger-organizations': 'seen' };
    const page = async () => {
      const t = performance.now();
      const res = await fetch(`${api.url}/api/archives?limit=50`, { headers });
      const body = (await res.json()) as unknown[];
      if (res.status !== 200 || body.length !== 50) throw new Error(`listing bench: got ${res.status} with ${body.length} rows`);
      return performance.now() - t;
    };
    for (let i = 0; i < 5; i++) await page();
    const ms: number[] = [];
    for (let i = 0; i < samples; i++) ms.push(await page());
    const p50 = round(percentile(ms, 50), 1);
    return [
      {
        bench: 'listing',
        archives: total,
        visible: `${Math.round(100 / every)}%`,
        pageSize: 50,
        samples,
        p50Ms: p50,
        p99Ms: round(percentile(ms, 99), 1),
        maxMs: round(Math.max(...ms), 1),
        goal: 'p50 < 150 ms',
        met: p50 < 150,
      },
    ];
  } finally {
    await api.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printLines(await run());
