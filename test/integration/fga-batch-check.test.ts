// Strong checks asked together (src/fga/check.ts `decide`, src/domain/coalescer.ts) against the
// real OpenFGA, through a forwarding proxy that counts what reaches it: questions in flight together
// go as one BatchCheck, and each still gets its own answer — allowed and denied mixed, a caller
// whose identity OpenFGA refuses, one whose item OpenFGA answers with an error, a batch refused as
// a whole. A server that drops every connection fails every waiting question, and through the API
// every waiting signing request gets the answer a failed single check gives. Signing under
// concurrent load still refuses a revoked share at once.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createServer } from 'node:net';
import { OpenFgaClient } from '@openfga/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { share, unshare } from '../../src/cli/fga-share.ts';
import { viewableArchives } from '../../src/fga/authorize.ts';
import { batchable, checkEndpointOf, createCheckEndpoint, FgaCheckError, type CheckQuestion } from '../../src/fga/check.ts';
import { devHeaders, type TestApi } from '../support/api.ts';
import type { TestDatabase } from '../support/db.ts';
import { checkQuestion, ownedArchiveTuples, type TestStore } from '../support/fga.ts';
import { useHarness } from '../support/harness.ts';
import { drain, insertArchive, insertJob } from '../support/ledger.ts';

const h = useHarness();
let store: TestStore;
const job = 'capture_job:9b2f1c7e-0000-4000-8000-000000000b01';
const archive = 'archive:9b2f1c7e-0000-4000-8000-000000000ba1';
const NOW = '2026-01-01T00:00:00Z';

beforeAll(async () => {
  store = h.store;
  await store.client.write({ writes: ownedArchiveTuples(job, archive) });
});

const q = (user: string, orgs: string[], relation = 'can_view'): CheckQuestion => checkQuestion(user, relation, archive, orgs, NOW);

/** A proxy in front of OpenFGA that counts requests by path and can refuse batch checks itself. */
async function countingProxy(opts: { refuseBatches?: number } = {}) {
  const upstream = new URL(store.apiUrl);
  const seen: { path: string; checks: number }[] = [];
  /** each batch check's consistency preference, in arrival order */
  const consistencies: unknown[] = [];
  let refusals = opts.refuseBatches ?? 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = req.url!.replace(/^\/stores\/[^/]+/, '');
      const parsed = JSON.parse(body.toString('utf8')) as { checks?: unknown[]; consistency?: unknown };
      seen.push({ path, checks: parsed.checks?.length ?? 1 });
      if (path === '/batch-check') consistencies.push(parsed.consistency);
      if (path === '/batch-check' && refusals > 0) {
        refusals--;
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'validation_error', message: 'refused by the test' }));
        return;
      }
      const up = http.request({ hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      });
      up.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen, consistencies, close: () => new Promise((r) => server.close(r)) };
}

/** A server that accepts connections and drops each at once, counting them. */
async function droppingServer() {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, connections: () => connections, close: () => server.close() };
}

/** The first question goes alone when its turn ends; the rest, asked while it is out, go together as the next batch. */
async function askBehindOne(decide: (q: CheckQuestion) => Promise<boolean>, questions: CheckQuestion[]): Promise<(boolean | Error)[]> {
  const first = decide(q('olga', []));
  await new Promise((r) => setImmediate(r));
  const rest = questions.map((x) => decide(x).catch((e: unknown) => e as Error));
  expect(await first).toBe(true);
  return Promise.all(rest);
}

describe('checks asked together', () => {
  it('go as one BatchCheck, allowed and denied mixed, each with its own answer (as its single Check gives)', async () => {
    const proxy = await countingProxy();
    try {
      const lean = createCheckEndpoint({ apiUrl: proxy.url, storeId: store.storeId, modelId: store.modelId, batchesInFlight: 1 });
      const questions = [q('bob', ['acme']), q('eve', []), q('olga', []), q('bob', ['other']), q('carol', ['other', 'acme']), q('eve', ['acmex'])];
      const expected = [true, false, true, false, true, false];
      expect(await askBehindOne(lean.decide, questions)).toEqual(expected);
      expect(proxy.seen).toEqual([
        { path: '/check', checks: 1 },
        { path: '/batch-check', checks: 6 },
      ]);
      for (const [i, question] of questions.entries()) expect(await lean.check(question)).toBe(expected[i]);
    } finally {
      await proxy.close();
    }
  });

  it('a caller whose identity OpenFGA refuses does not spoil the batch: it alone gets the single check’s 400', async () => {
    const proxy = await countingProxy();
    try {
      const lean = createCheckEndpoint({ apiUrl: proxy.url, storeId: store.storeId, modelId: store.modelId, batchesInFlight: 1 });
      const tooMany = Array.from({ length: 101 }, (_, i) => `org${i}`);
      const answers = await askBehindOne(lean.decide, [q('bob', ['acme']), q('bob', ['a b']), q('eve', []), q('bob', tooMany), q('x'.repeat(600), [])]);
      expect(answers.slice(0, 1)).toEqual([true]);
      expect(answers[2]).toBe(false);
      for (const i of [1, 3, 4]) {
        expect(answers[i]).toBeInstanceOf(FgaCheckError);
        expect((answers[i] as FgaCheckError).statusCode).toBe(400);
      }
      expect((answers[1] as Error).message).toMatch(/\(400\).*TupleKey\.Object/);
      expect((answers[3] as Error).message).toMatch(/\(400\).*no more than 100/);
      // the two good ones went as one batch; the three refused identities each as a single check
      expect(proxy.seen.filter((s) => s.path === '/batch-check')).toEqual([{ path: '/batch-check', checks: 2 }]);
      expect(proxy.seen.filter((s) => s.path === '/check')).toHaveLength(4);
    } finally {
      await proxy.close();
    }
  });

  it('an item OpenFGA answers with an error gets its single Check’s error; the others their answers', async () => {
    const lean = createCheckEndpoint({ apiUrl: store.apiUrl, storeId: store.storeId, modelId: store.modelId, batchesInFlight: 1 });
    const answers = await askBehindOne(lean.decide, [q('bob', ['acme']), q('bob', [], 'no_such_relation'), q('eve', [])]);
    expect(answers[0]).toBe(true);
    expect(answers[2]).toBe(false);
    expect(answers[1]).toBeInstanceOf(FgaCheckError);
    expect((answers[1] as FgaCheckError).statusCode).toBe(400);
    expect((answers[1] as Error).message).toMatch(/OpenFGA check failed \(400\).*no_such_relation/);
  });

  it('batchable() against OpenFGA itself: a question it calls batchable never gets a batch refused as a whole; one it does not is refused, except where it is stricter', async () => {
    const good = q('bob', ['acme']);
    const tuple = (user: string) => ({ user, relation: 'member', object: 'organization:acme' });
    const cases: [string, CheckQuestion][] = [
      ['user of 512 characters', { ...good, user: `user:${'u'.repeat(507)}` }],
      ['user of 513 characters', { ...good, user: `user:${'u'.repeat(508)}` }],
      ['user of 1 character', { ...good, user: 'u' }],
      ['user with a space', { ...good, user: 'user:bo b' }],
      ['object of 256 characters', { ...good, object: `archive:${'a'.repeat(248)}` }],
      ['object of 257 characters', { ...good, object: `archive:${'a'.repeat(249)}` }],
      ['relation of 50 characters (not in the model)', { ...good, relation: 'r'.repeat(50) }],
      ['relation of 51 characters', { ...good, relation: 'r'.repeat(51) }],
      ['relation with a colon', { ...good, relation: 'can:view' }],
      ['relation with a hash', { ...good, relation: 'can#view' }],
      ['100 contextual tuples', { ...good, contextualTuples: Array.from({ length: 100 }, () => tuple('user:bob')) }],
      ['101 contextual tuples', { ...good, contextualTuples: Array.from({ length: 101 }, () => tuple('user:bob')) }],
    ];
    // stricter than OpenFGA, which answers this one item with an error and takes the batch: asked
    // alone instead, which costs a request and is never wrong
    const stricter: [string, CheckQuestion][] = [['a contextual tuple whose user has a space', { ...good, contextualTuples: [tuple('user:b ob')] }]];
    // the body decide sends, posted here so the answer's status can be seen
    const lean = createCheckEndpoint({ apiUrl: store.apiUrl, storeId: store.storeId, modelId: store.modelId });
    const refusedAsAWhole = async (extra: CheckQuestion): Promise<boolean> => {
      const res = await fetch(`${store.apiUrl}/stores/${store.storeId}/batch-check`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: lean.batchRequestBody([good, extra]),
      });
      const text = await res.text();
      if (res.status !== 200 && res.status !== 400) throw new Error(`batch-check answered ${res.status}: ${text}`);
      return res.status === 400;
    };
    const seen = await Promise.all(cases.map(async ([name, c]) => ({ name, batchable: batchable(c), openFgaTakesTheBatch: !(await refusedAsAWhole(c)) })));
    for (const x of seen) expect({ name: x.name, batchable: x.batchable }).toEqual({ name: x.name, batchable: x.openFgaTakesTheBatch });
    // both answers occur, so the comparison can tell them apart
    expect(new Set(seen.map((x) => x.batchable))).toEqual(new Set([true, false]));
    for (const [name, c] of stricter)
      expect({ name, batchable: batchable(c), openFgaTakesTheBatch: !(await refusedAsAWhole(c)) }).toEqual({
        name,
        batchable: false,
        openFgaTakesTheBatch: true,
      });
  });

  it('a batch refused as a whole is asked again question by question', async () => {
    const proxy = await countingProxy({ refuseBatches: 1 });
    try {
      const lean = createCheckEndpoint({ apiUrl: proxy.url, storeId: store.storeId, modelId: store.modelId, batchesInFlight: 1 });
      expect(await askBehindOne(lean.decide, [q('bob', ['acme']), q('eve', []), q('olga', [])])).toEqual([true, false, true]);
      expect(proxy.seen.map((s) => s.path)).toEqual(['/check', '/batch-check', '/check', '/check', '/check']);
    } finally {
      await proxy.close();
    }
  });

  it('a server that drops every connection fails every waiting question with the same error', async () => {
    const dropping = await droppingServer();
    try {
      const lean = createCheckEndpoint({ apiUrl: dropping.url, storeId: store.storeId, modelId: store.modelId, batchesInFlight: 1 });
      const first = lean.decide(q('olga', [])).catch((e: unknown) => e);
      await new Promise((r) => setImmediate(r));
      const rest = [q('bob', ['acme']), q('eve', []), q('ann', [])].map((x) => lean.decide(x).catch((e: unknown) => e));
      const answers = await Promise.all([first, ...rest]);
      for (const a of answers) {
        expect(a).toBeInstanceOf(FgaCheckError);
        expect((a as FgaCheckError).statusCode).toBeUndefined();
        expect((a as Error).message).toMatch(/socket hang up|ECONNRESET/);
      }
      // the lone first question and the batch of three that waited behind it: each asked 4 times
      // (3 retries), no more
      expect(dropping.connections()).toBe(8);
    } finally {
      dropping.close();
    }
  });
});

describe('can_view over a list of archives (viewableArchives, the listing and the search)', () => {
  // 120 archives: 0–59 of olga's job (organization acme), 60–119 of a job of globex; 100 shared with
  // vic for an hour, 110 with every member of acme
  const ids = Array.from({ length: 120 }, () => randomUUID());
  const jobA = `capture_job:${randomUUID()}`;
  const jobB = `capture_job:${randomUUID()}`;
  const range = (from: number, to: number) => new Set(ids.slice(from, to));

  beforeAll(async () => {
    const writes = [
      ...ownedArchiveTuples(jobA, `archive:${ids[0]}`),
      { user: 'organization:globex', relation: 'parent', object: jobB },
      ...ids.slice(1).map((id, i) => ({ user: i + 1 < 60 ? jobA : jobB, relation: 'parent', object: `archive:${id}` })),
      {
        user: 'user:vic',
        relation: 'viewer',
        object: `archive:${ids[100]}`,
        condition: { name: 'non_expired_grant', context: { grant_time: new Date().toISOString(), grant_duration: '1h' } },
      },
      { user: 'organization:acme#member', relation: 'viewer', object: `archive:${ids[110]}` },
    ];
    for (let i = 0; i < writes.length; i += 100) await store.client.write({ writes: writes.slice(i, i + 100) });
  });

  const callers: [string, { subject: string; organizations: string[] }, Set<string>][] = [
    ['the owner of one job', { subject: 'olga', organizations: [] }, range(0, 60)],
    ['a member of acme', { subject: 'bob', organizations: ['acme'] }, new Set([...range(0, 60), ids[110]!])],
    ['a member of globex', { subject: 'bob', organizations: ['globex'] }, range(60, 120)],
    ['a caller with one share', { subject: 'vic', organizations: [] }, new Set([ids[100]!])],
    ['nobody', { subject: 'eve', organizations: [] }, new Set<string>()],
  ];

  it.each(callers)('%s: the lean BatchChecks (at most 50, MINIMIZE_LATENCY) and the SDK answer exactly what OpenFGA allows', async (_, identity, expected) => {
    const proxy = await countingProxy();
    try {
      const lean = new OpenFgaClient({ apiUrl: proxy.url, storeId: store.storeId, authorizationModelId: store.modelId });
      expect(checkEndpointOf(lean)).not.toBeNull();
      expect(await viewableArchives(lean, identity, ids)).toEqual(expected);
      // sent side by side, so they may arrive in any order
      expect(proxy.seen.map((x) => `${x.path} ${x.checks}`).sort()).toEqual(['/batch-check 20', '/batch-check 50', '/batch-check 50']);
      expect(proxy.consistencies).toEqual(['MINIMIZE_LATENCY', 'MINIMIZE_LATENCY', 'MINIMIZE_LATENCY']);
      // no model pinned: the lean endpoint is not made and the SDK asks
      const sdk = new OpenFgaClient({ apiUrl: proxy.url, storeId: store.storeId });
      expect(checkEndpointOf(sdk)).toBeNull();
      expect(await viewableArchives(sdk, identity, ids)).toEqual(expected);
      expect(proxy.seen.filter((x) => x.path === '/batch-check')).toHaveLength(6);
    } finally {
      await proxy.close();
    }
  });

  it('nothing to check asks nothing', async () => {
    const proxy = await countingProxy();
    try {
      const lean = new OpenFgaClient({ apiUrl: proxy.url, storeId: store.storeId, authorizationModelId: store.modelId });
      expect(await viewableArchives(lean, { subject: 'olga', organizations: [] }, [])).toEqual(new Set());
      expect(proxy.seen).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('a question OpenFGA refuses fails the whole list on both paths (nothing shown that was not checked)', async () => {
    // 101 organizations: 101 contextual tuples, more than OpenFGA takes in one check
    const identity = { subject: 'bob', organizations: Array.from({ length: 101 }, (_, i) => `org${i}`) };
    const lean = new OpenFgaClient({ apiUrl: store.apiUrl, storeId: store.storeId, authorizationModelId: store.modelId });
    await expect(viewableArchives(lean, identity, ids.slice(0, 3))).rejects.toThrow(/400|contextual/i);
    const sdk = new OpenFgaClient({ apiUrl: store.apiUrl, storeId: store.storeId });
    await expect(viewableArchives(sdk, identity, ids.slice(0, 3))).rejects.toThrow();
  });
});

describe('signing with its checks batched', () => {
  let tdb: TestDatabase;
  let api: TestApi;
  let archiveId: string;
  const sign = async (subject: string, orgs: string[] = []) =>
    (await fetch(`${api.url}/api/archives/${archiveId}/url`, { method: 'POST', headers: devHeaders(subject, orgs) })).status;

  beforeAll(async () => {
    tdb = h.tdb;
    api = h.api;
    const crawl = await insertJob(tdb.db, { orgId: 'acme', submittedBy: 'alice' });
    archiveId = (await insertArchive(tdb.db, { crawlId: crawl, bucket: api.config.s3.bucket })).id;
    await drain(tdb.db, store.client);
  });

  it('under concurrent load a share signs while it stands and is refused (404) at once after unshare', async () => {
    const deps = { db: tdb.db, fga: store.client };
    await share(deps, archiveId, 'olivia', '1h');
    // 40 requests at once: olivia's, a member's and an outsider's interleaved in the same batches
    const round = () =>
      Promise.all(Array.from({ length: 40 }, (_, i) => sign(...([['olivia'], ['bob', ['acme']], ['mallory']] as [string, string[]?][])[i % 3]!)));
    const before = await round();
    expect(before.filter((_, i) => i % 3 === 0).every((s) => s === 200)).toBe(true);
    expect(before.filter((_, i) => i % 3 === 1).every((s) => s === 200)).toBe(true);
    expect(before.filter((_, i) => i % 3 === 2).every((s) => s === 404)).toBe(true);
    await unshare(deps, archiveId, 'olivia');
    const after = await round();
    expect(after.filter((_, i) => i % 3 === 0).every((s) => s === 404)).toBe(true);
    expect(after.filter((_, i) => i % 3 === 1).every((s) => s === 200)).toBe(true);
  });

  it('a deleted archive is not found at once, while others sign in the same batches', async () => {
    const crawl = await insertJob(tdb.db, { orgId: 'acme', submittedBy: 'alice' });
    const gone = (await insertArchive(tdb.db, { crawlId: crawl, bucket: api.config.s3.bucket })).id;
    await drain(tdb.db, store.client);
    const signId = async (id: string) => (await fetch(`${api.url}/api/archives/${id}/url`, { method: 'POST', headers: devHeaders('alice') })).status;
    expect(await Promise.all([signId(gone), signId(archiveId), signId(gone)])).toEqual([200, 200, 200]);
    await tdb.db.deleteFrom('archives').where('id', '=', gone).execute();
    expect(await Promise.all([signId(gone), signId(archiveId), signId(gone), signId(archiveId)])).toEqual([404, 200, 404, 200]);
  });

  it('OpenFGA unreachable: every waiting signing request gets the failed check’s answer (500, internal error)', async () => {
    const dropping = await droppingServer();
    const down = new OpenFgaClient({ apiUrl: dropping.url, storeId: store.storeId, authorizationModelId: store.modelId });
    const broken = await h.startApi({ identity: 'dev', deps: { fga: down } });
    try {
      const answers = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const res = await fetch(`${broken.url}/api/archives/${archiveId}/url`, { method: 'POST', headers: devHeaders('bob', ['acme']) });
          return { status: res.status, body: await res.json() };
        }),
      );
      expect(answers).toEqual(Array.from({ length: 5 }, () => ({ status: 500, body: { error: 'internal error' } })));
    } finally {
      await broken.close();
      dropping.close();
    }
  });
});
