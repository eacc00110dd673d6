// The lean Check (src/fga/check.ts) against the real OpenFGA: the same decisions as the SDK's
// client.check for every path to can_view and can_submit (stored owner, membership as a contextual
// tuple, a conditioned share before and after it lapses, nobody), OpenFGA's 400 passed on with its
// status, a server that drops connections retried and then refused, and an authenticating client
// left to the SDK.
import { createServer } from 'node:net';
import { ConsistencyPreference, CredentialsMethod, OpenFgaClient } from '@openfga/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkEndpointOf, createCheckEndpoint, FgaCheckError, type CheckQuestion } from '../../src/fga/check.ts';
import { checkQuestion, ownedArchiveTuples, type TestStore } from '../support/fga.ts';
import { useHarness } from '../support/harness.ts';

const h = useHarness({ api: false });
let store: TestStore;
const job = 'capture_job:9b2f1c7e-0000-4000-8000-000000000001';
const archive = 'archive:9b2f1c7e-0000-4000-8000-0000000000a1';

beforeAll(async () => {
  store = h.store;
  await store.client.write({
    writes: [
      ...ownedArchiveTuples(job, archive),
      {
        user: 'user:sam',
        relation: 'viewer',
        object: archive,
        condition: { name: 'non_expired_grant', context: { grant_time: '2030-01-01T00:00:00Z', grant_duration: '1h' } },
      },
      { user: 'user:ada', relation: 'admin', object: 'organization:acme' },
    ],
  });
});

const q = checkQuestion;

describe('lean check', () => {
  it('decides as the SDK does, on every path', async () => {
    const lean = checkEndpointOf(store.client)!;
    expect(lean).not.toBeNull();
    const cases: [CheckQuestion, boolean][] = [
      [q('olga', 'can_view', archive, [], '2026-01-01T00:00:00Z'), true],
      [q('bob', 'can_view', archive, ['acme'], '2026-01-01T00:00:00Z'), true],
      [q('bob', 'can_view', archive, ['other'], '2026-01-01T00:00:00Z'), false],
      [q('sam', 'can_view', archive, [], '2030-01-01T00:30:00Z'), true],
      [q('sam', 'can_view', archive, [], '2030-01-01T01:00:00Z'), false],
      [q('eve', 'can_view', archive, [], '2030-01-01T00:30:00Z'), false],
      [q('ada', 'can_submit', 'organization:acme', [], '2026-01-01T00:00:00Z'), true],
      // membership alone never grants can_submit
      [q('bob', 'can_submit', 'organization:acme', ['acme'], '2026-01-01T00:00:00Z'), false],
    ];
    for (const [question, expected] of cases) {
      const sdk = await store.client.check(question, { consistency: ConsistencyPreference.HigherConsistency });
      expect(sdk.allowed, JSON.stringify(question)).toBe(expected);
      expect(await lean.check(question), JSON.stringify(question)).toBe(expected);
    }
  });

  it('passes on a 400 with OpenFGA status and message, at once', async () => {
    const lean = checkEndpointOf(store.client)!;
    const err = await lean.check(q('bob', 'no_such_relation', archive, [], '2026-01-01T00:00:00Z')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FgaCheckError);
    expect((err as FgaCheckError).statusCode).toBe(400);
    expect((err as Error).message).toMatch(/\(400\).*no_such_relation/);
  });

  it('a server that drops every connection: asked 4 times (3 retries), then refused with no status', async () => {
    let connections = 0;
    const dropping = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((r) => dropping.listen(0, '127.0.0.1', r));
    try {
      const lean = createCheckEndpoint({
        apiUrl: `http://127.0.0.1:${(dropping.address() as { port: number }).port}`,
        storeId: store.storeId,
        modelId: store.modelId,
      });
      const err = await lean.check(q('olga', 'can_view', archive, [], '2026-01-01T00:00:00Z')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FgaCheckError);
      expect((err as FgaCheckError).statusCode).toBeUndefined();
      expect((err as Error).message).toMatch(/socket hang up|ECONNRESET/);
      expect(connections).toBe(4);
    } finally {
      dropping.close();
    }
  });

  it('leaves a client with credentials, or without a pinned model, to the SDK', () => {
    const withToken = new OpenFgaClient({
      apiUrl: store.apiUrl,
      storeId: store.storeId,
      authorizationModelId: store.modelId,
      credentials: { method: CredentialsMethod.ApiToken, config: { token: 'x' } },
    });
    expect(checkEndpointOf(withToken)).toBeNull();
    expect(checkEndpointOf(new OpenFgaClient({ apiUrl: store.apiUrl, storeId: store.storeId }))).toBeNull();
  });
});
