// Benchmark: POST /api/archives/:id/url at 32 concurrent callers, beside a bare OpenFGA Check (the
// same can_view question at HIGHER_CONSISTENCY, same contextual tuples) measured in the same run.
// Goal: the API adds under 50% to the bare check's p99.
//
//   node bench/signing.ts     (or npm run bench -- signing)
//   → {"bench":"signing","kind":"bare-check",...} {"bench":"signing","kind":"api",...} {"bench":"signing","kind":"summary",...}
import { pathToFileURL } from 'node:url';
import { canView } from '../src/fga/authorize.ts';
import { drain, insertArchive, insertJob } from '../test/support/ledger.ts';
import { printLines, round } from './support-crawl.ts';
import { closedLoop, startBenchApi } from './support-api.ts';

export async function run(opts: { requests?: number; concurrency?: number } = {}): Promise<Record<string, unknown>[]> {
  const requests = opts.requests ?? 4000;
  const concurrency = opts.concurrency ?? 32;
  const api = await startBenchApi();
  try {
    const job = await insertJob(api.deps.db, { orgId: 'acme', submittedBy: 'alice' });
    const archive = await insertArchive(api.deps.db, { crawlId: job, bucket: api.deps.config.s3.bucket });
    await drain(api.deps.db, api.deps.fga);
    // a member of the owning organization: the contextual-tuple path, the common one
    const identity = { subject: 'bob', organizations: ['acme'] };
    const headers = { 'x-capture-ledger-subject': 'bob', 'x-capture-ledger-organizations': 'acme' };
    const bare = () => canView(api.deps.fga, identity, archive.id);
    const viaApi = async () => {
      const res = await fetch(`${api.url}/api/archives/${archive.id}/url`, { method: 'POST', headers });
      await res.arrayBuffer();
      return res.status === 200;
    };
    if (!(await bare()) || !(await viaApi())) throw new Error('signing bench: the caller is not allowed (fixture broken)');
    // warm up both paths, then measure them alternately twice so drift hits both alike
    await closedLoop(400, concurrency, bare);
    await closedLoop(400, concurrency, viaApi);
    const b1 = await closedLoop(requests / 2, concurrency, bare);
    const a1 = await closedLoop(requests / 2, concurrency, viaApi);
    const b2 = await closedLoop(requests / 2, concurrency, bare);
    const a2 = await closedLoop(requests / 2, concurrency, viaApi);
    const merge = (x: typeof b1, y: typeof b1) => ({
      requests: x.requests + y.requests,
      concurrency,
      perSecond: round((x.requests + y.requests) / (x.seconds + y.seconds), 0),
      p50Ms: round((x.p50Ms + y.p50Ms) / 2, 2),
      p99Ms: round((x.p99Ms + y.p99Ms) / 2, 2),
      errors: x.errors + y.errors,
    });
    const bareR = merge(b1, b2);
    const apiR = merge(a1, a2);
    const addedP99Pct = round(((apiR.p99Ms - bareR.p99Ms) / bareR.p99Ms) * 100, 1);
    return [
      { bench: 'signing', kind: 'bare-check', ...bareR },
      { bench: 'signing', kind: 'api', ...apiR },
      { bench: 'signing', kind: 'summary', addedP99Pct, goal: '< 50% added to the bare check p99', met: addedP99Pct < 50 },
    ];
  } finally {
    await api.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printLines(await run());
