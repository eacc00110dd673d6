// GET /api/me: the caller as resolved, and canSubmit (can_submit on the first organization,
// HIGHER_CONSISTENCY, never 404).
import { beforeAll, describe, expect, it } from 'vitest';
import { devHeaders, type TestApi, type TestIssuer } from '../support/api.ts';
import { useHarness } from '../support/harness.ts';

const h = useHarness();
let jwtApi: TestApi;
let issuer: TestIssuer;

async function me(headers: Record<string, string>, query = '', target = h.api) {
  const res = await fetch(`${target.url}/api/me${query}`, { headers });
  return { status: res.status, body: (await res.json()) as unknown };
}

beforeAll(async () => {
  issuer = await h.startIssuer();
  jwtApi = await h.startApi({ identity: { oidc: { url: issuer.url } } });
});

describe('GET /api/me', () => {
  it('answers canSubmit false (not 404) without a grant, and false with no organizations', async () => {
    expect(await me(devHeaders('alice', ['acme']))).toEqual({ status: 200, body: { subject: 'alice', organizations: ['acme'], canSubmit: false } });
    expect(await me(devHeaders('alice'))).toEqual({ status: 200, body: { subject: 'alice', organizations: [], canSubmit: false } });
  });

  it('follows a submitter grant at once, and its revocation at once', async () => {
    const tuple = { user: 'user:sam', relation: 'submitter', object: 'organization:acme' };
    await h.store.client.write({ writes: [tuple] });
    expect(await me(devHeaders('sam', ['acme']))).toEqual({ status: 200, body: { subject: 'sam', organizations: ['acme'], canSubmit: true } });
    // through a JWT too
    expect(await me(await issuer.auth('sam', ['acme']), '', jwtApi)).toEqual({
      status: 200,
      body: { subject: 'sam', organizations: ['acme'], canSubmit: true },
    });
    await h.store.client.write({ deletes: [tuple] });
    expect((await me(devHeaders('sam', ['acme']))).body).toMatchObject({ canSubmit: false });
  });

  it('asks about the first organization only (crawls are attributed to it)', async () => {
    await h.store.client.write({ writes: [{ user: 'user:adam', relation: 'admin', object: 'organization:globex' }] });
    expect((await me(devHeaders('adam', ['globex', 'acme']))).body).toMatchObject({ canSubmit: true });
    expect((await me(devHeaders('adam', ['acme', 'globex']))).body).toMatchObject({ canSubmit: false });
  });

  it('membership is not a grant: claiming an organization does not make you a submitter', async () => {
    expect((await me(devHeaders('mallory', ['acme']))).body).toMatchObject({ canSubmit: false });
  });

  it('drops unknown query parameters; 401 without identity', async () => {
    expect((await me(devHeaders('alice'), '?x=1&subject=root')).body).toEqual({ subject: 'alice', organizations: [], canSubmit: false });
    expect(await me({})).toEqual({ status: 401, body: { error: 'unauthenticated' } });
  });
});
