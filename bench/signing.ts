// Benchmark: POST /api/archives/:id/url at 32 concurrent callers, beside a bare OpenFGA Check (the
// same can_view question at HIGHER_CONSISTENCY, same contextual tuples, one plain Check per
// question over a keep-alive HTTP connection, src/fga/check.ts — never batched) measured in the
// same run, at two ledger sizes (the second 10× the first), each request for a random archive.
// Callers present a JWT from a dev issuer, as in production (one token per caller, reused as a
// client would for its lifetime). The API runs as its own process; the load for both sides comes
// from this process through the same client (node:http, keep-alive, one socket per caller), so
// each side's client costs the same.
// Goals (issue 14): the API's throughput ≥ 0.8× the bare check's, and it adds < 25% to its p99.
//
//   node bench/signing.ts     (or npm run bench -- signing)
//   → {"bench":"signing","kind":"bare-check",...} {"bench":"signing","kind":"api",...} {"bench":"signing","kind":"summary",...}
import { pathToFileURL } from 'node:url';
import { checkQuestion } from '../src/fga/authorize.ts';
import { checkEndpointOf } from '../src/fga/check.ts';
import { archiveRef } from '../src/fga/tuples.ts';
import { drain, insertJob, insertManyArchives } from '../test/support/ledger.ts';
import { printLines } from './support-crawl.ts';
import { load1Now, round } from './support-figures.ts';
import { closedLoop, keepAlivePost, startBenchApi } from './support-api.ts';

export async function run(opts: { requests?: number; concurrency?: number; archives?: number } = {}): Promise<Record<string, unknown>[]> {
  const base = opts.archives ?? 1000;
  const out: Record<string, unknown>[] = [];
  for (const archives of [base, base * 10]) out.push(...(await measure({ ...opts, archives })));
  return out;
}

async function measure(opts: { requests?: number; concurrency?: number; archives: number }): Promise<Record<string, unknown>[]> {
  const requests = opts.requests ?? 4000;
  const concurrency = opts.concurrency ?? 32;
  const api = await startBenchApi();
  try {
    const job = await insertJob(api.deps.db, { orgId: 'acme', submittedBy: 'alice' });
    const ids = await insertManyArchives(api.deps.db, job, api.deps.config.s3.bucket, opts.archives);
    await drain(api.deps.db, api.deps.fga);
    // a member of the owning organization: the contextual-tuple path, the common one
    const identity = { subject: 'bob', organizations: ['acme'] };
    const headers = await api.headersFor('bob', ['acme']);
    const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
    const single = checkEndpointOf(api.deps.fga);
    if (single === null) throw new Error('signing bench: OpenFGA client authenticates; the bare check needs the plain one');
    const bare = () => single.check(checkQuestion(identity, 'can_view', archiveRef(pick())));
    const post = keepAlivePost(concurrency);
    const viaApi = async () => (await post(`${api.url}/api/archives/${pick()}/url`, headers)).status === 200;
    if (!(await bare()) || !(await viaApi())) throw new Error('signing bench: the caller is not allowed (fixture broken)');
    // warm up both paths, then measure them alternately twice so drift hits both alike
    await closedLoop(400, concurrency, bare);
    await closedLoop(400, concurrency, viaApi);
    const load1 = load1Now();
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
    const throughputRatio = round(apiR.perSecond / bareR.perSecond, 2);
    post.close();
    return [
      {
        bench: 'signing',
        kind: 'bare-check',
        side: 'one plain OpenFGA Check per question (POST /check), keep-alive',
        archives: opts.archives,
        ...bareR,
        load1,
      },
      { bench: 'signing', kind: 'api', side: 'POST /api/archives/:id/url with a JWT, API in its own process', archives: opts.archives, ...apiR, load1 },
      {
        bench: 'signing',
        kind: 'summary',
        archives: opts.archives,
        throughputRatio,
        addedP99Pct,
        goal: 'throughput ≥ 0.8× the bare check, < 25% added to its p99',
        met: throughputRatio >= 0.8 && addedP99Pct < 25,
        load1,
      },
    ];
  } finally {
    await api.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printLines(await run());
