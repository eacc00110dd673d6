// Bad input never reaches a 500 (issue 29, deliver 7): every operation of GET /api/openapi.json is
// driven with requests generated from its own schemas (fitting, broken at any depth, missing,
// empty, truncated JSON, the wrong content type, oversized, bad identity headers), against the
// real API on the real stack. Every answer must be below 500 and one the operation documents.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { devHeaders } from '../support/api.ts';
import { useHarness } from '../support/harness.ts';
import { drain, insertArchive, insertJob } from '../support/ledger.ts';
import { operationsOf, requestsFor, type GeneratedRequest, type Operation } from '../support/openapi-requests.ts';
import { rawRequest } from '../support/raw-http.ts';

const ORG = 'acme';
const h = useHarness({
  crawls: 'stub',
  env: { CAPTURE_LEDGER_OPENSEARCH_URL: 'http://127.0.0.1:9200', CAPTURE_LEDGER_OPENSEARCH_INDEX: `cl-test-fuzz-${randomBytes(4).toString('hex')}` },
  grants: [['alice', 'submitter', ORG]],
});

/** generated requests per operation: 15 × 100 take about 5 s here */
const RUNS = 100;
let operations: Operation[];
const knownIds: string[] = [];
const alice = devHeaders('alice', [ORG]);
// seeds are URLs (of hosts that resolve nowhere: a started crawl dispatches to the stub only)
const url = fc.webUrl({ validSchemes: ['http', 'https'] });
const HINTS = { seeds: url, seed: url, domain: fc.domain(), q: fc.string({ minLength: 1, maxLength: 20 }) };

beforeAll(async () => {
  const doc = await (await fetch(`${h.api.url}/api/openapi.json`)).json();
  operations = operationsOf(doc as Parameters<typeof operationsOf>[0]);
  const crawlId = await insertJob(h.tdb.db, { orgId: ORG, submittedBy: 'alice' });
  const archive = await insertArchive(h.tdb.db, { crawlId, bucket: h.bucket });
  await drain(h.tdb.db, h.store.client);
  knownIds.push(crawlId, archive.id);
});

const label = (op: Operation) => `${op.method} ${op.path}`;

/** The answer to `req`, and what is wrong with it (undefined: nothing). */
async function verdict(op: Operation, req: GeneratedRequest): Promise<string | undefined> {
  const res = await rawRequest(h.api.url, req);
  if (res.status < 500 && op.statuses.has(res.status)) return undefined;
  return `${label(op)} answered ${res.status} (documented: ${[...op.statuses].join(',')}) to ${JSON.stringify({ ...req, body: req.body?.toString().slice(0, 300) })}: ${res.body.slice(0, 300)}`;
}

describe('the OpenAPI document', () => {
  it('has every operation the API serves, each with the answers any route can give', () => {
    expect(operations.map(label).sort()).toEqual(
      [
        'GET /api/me',
        'GET /api/archives',
        'POST /api/archives/{id}/url',
        'POST /api/archives/{id}/thumbnail-url',
        'DELETE /api/archives/{id}',
        'POST /api/crawls',
        'GET /api/crawls',
        'GET /api/crawls/{id}',
        'POST /api/crawls/{id}/levels/{depth}',
        'POST /api/crawls/{id}/levels/{depth}/heartbeat',
        'GET /api/crawls/{id}/progress',
        'GET /api/crawls/{id}/pacing',
        'GET /api/crawls/{id}/decisions',
        'GET /api/decisions',
        'GET /api/crawl-rules/check',
        'POST /api/crawls/{id}/index',
        'GET /api/search',
      ].sort(),
    );
    for (const op of operations) {
      expect([...op.statuses], label(op)).toEqual(expect.arrayContaining([400, 421, 431]));
      if (op.method === 'POST') expect([...op.statuses], label(op)).toEqual(expect.arrayContaining([413, 415]));
    }
  });
});

describe('generated requests', () => {
  it('every operation answers below 500, with a status it documents', async () => {
    for (const op of operations) {
      await fc.assert(
        fc.asyncProperty(requestsFor(op, { valid: alice, knownIds, hints: HINTS }), async (req) => {
          const wrong = await verdict(op, req);
          expect(wrong).toBeUndefined();
        }),
        { numRuns: RUNS },
      );
    }
  }, 120_000);
});

describe('the edges, for every operation', () => {
  const fill = (op: Operation) => op.path.replace(/\{id\}/g, knownIds[0]!).replace(/\{depth\}/g, '0');
  const cases: [string, (op: Operation) => GeneratedRequest][] = [
    ['no body, no content type', (op) => ({ method: op.method, path: fill(op), headers: alice })],
    ['an empty JSON body', (op) => ({ method: op.method, path: fill(op), headers: { ...alice, 'content-type': 'application/json' }, body: '' })],
    [
      'a truncated JSON body',
      (op) => ({ method: op.method, path: fill(op), headers: { ...alice, 'content-type': 'application/json' }, body: '{"seeds": ["http://a.test/"' }),
    ],
    [
      'a body over 1 MiB',
      (op) => ({
        method: op.method,
        path: fill(op),
        headers: { ...alice, 'content-type': 'application/json' },
        body: JSON.stringify({ x: 'y'.repeat(1024 * 1024 + 10) }),
      }),
    ],
    ['a query over 16 KiB', (op) => ({ method: op.method, path: `${fill(op)}?q=${'z'.repeat(17 * 1024)}`, headers: alice })],
    ['a query of 8 KiB', (op) => ({ method: op.method, path: `${fill(op)}?seed=${'z'.repeat(8 * 1024)}&q=${'z'.repeat(100)}`, headers: alice })],
    ['no identity', (op) => ({ method: op.method, path: fill(op), headers: {} })],
  ];
  it.each(cases)('%s: a documented 4xx or success, never 5xx', async (_what, make) => {
    const wrong: string[] = [];
    for (const op of operations) {
      const problem = await verdict(op, make(op));
      if (problem !== undefined) wrong.push(problem);
    }
    expect(wrong).toEqual([]);
  });

  it('POST /api/crawls with no body is a 400 that says a JSON object is needed (was a 500)', async () => {
    const res = await rawRequest(h.api.url, { method: 'POST', path: '/api/crawls', headers: alice });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toMatch(/the body must be a JSON object/);
  });
});
