// Identity, chosen once at startup: none → 401 everywhere; dev → the two headers; oidc → Bearer
// JWTs verified against the issuer's discovery document and JWKS, the dev headers ignored.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { base64url, SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oidcResolver } from '../../src/api/identity.ts';
import { generateIssuerKey } from '../../src/issuer/keys.ts';
import { isLoopback, signIssuerToken, startIssuer } from '../../src/issuer/issuer.ts';
import { devHeaders, type TestApi, type TestIssuer } from '../support/api.ts';
import { useHarness } from '../support/harness.ts';

const h = useHarness({ api: false, issuer: true });
let otherIssuer: TestIssuer;

const UNAUTH = { status: 401, body: { error: 'unauthenticated' } };

async function get(api: TestApi, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${api.url}${path}`, { headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* html */
  }
  return { status: res.status, body, headers: res.headers };
}

async function post(api: TestApi, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${api.url}${path}`, { method: 'POST', headers });
  return { status: res.status, body: (await res.json()) as unknown };
}

beforeAll(async () => {
  otherIssuer = await h.startIssuer();
});

describe('no identity configured', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await h.startApi({ identity: 'none' });
  });
  afterAll(() => api.close());

  it('answers 401 {"error":"unauthenticated"} on every /api route, dev headers or not', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const headers of [{}, devHeaders('alice', ['acme']), await h.issuer.auth('alice', ['acme'])]) {
      expect(await get(api, '/api/me', headers)).toMatchObject(UNAUTH);
      expect(await get(api, '/api/archives', headers)).toMatchObject(UNAUTH);
      expect(await post(api, `/api/archives/${id}/url`, headers)).toMatchObject(UNAUTH);
      // authentication comes first: even a malformed id is 401 here
      expect(await post(api, '/api/archives/nope/url', headers)).toMatchObject(UNAUTH);
    }
  });

  it('still serves the OpenAPI document and the picker (notice only)', async () => {
    expect((await get(api, '/api/openapi.json')).status).toBe(200);
    const page = await get(api, '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('id="notice"');
  });
});

describe('dev identity', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await h.startApi({ identity: 'dev' });
  });
  afterAll(() => api.close());

  it('trusts the subject and organizations headers', async () => {
    expect(await get(api, '/api/me', devHeaders('bob', ['acme', 'globex']))).toMatchObject({
      status: 200,
      body: { subject: 'bob', organizations: ['acme', 'globex'], canSubmit: false },
    });
    expect(await get(api, '/api/me', { 'X-Capture-ledger-Subject': 'carol', 'X-Capture-ledger-Organizations': ' a , b ,' })).toMatchObject({
      status: 200,
      body: { subject: 'carol', organizations: ['a', 'b'] },
    });
  });

  it('is 401 with no subject, a blank one, or names OpenFGA would misread', async () => {
    expect(await get(api, '/api/me', { 'x-capture-ledger-organizations': 'acme' })).toMatchObject(UNAUTH);
    expect(await get(api, '/api/me', { 'x-capture-ledger-subject': '  ' })).toMatchObject(UNAUTH);
    expect(await get(api, '/api/me', devHeaders('a#member'))).toMatchObject(UNAUTH);
    expect(await get(api, '/api/me', devHeaders('*'))).toMatchObject(UNAUTH);
    expect(await get(api, '/api/me', devHeaders('x'.repeat(201)))).toMatchObject(UNAUTH);
    expect(await get(api, '/api/me', devHeaders('bob', ['acme#member']))).toMatchObject(UNAUTH);
  });

  it('ignores a Bearer token (the dev resolver reads only its headers)', async () => {
    expect(await get(api, '/api/me', await h.issuer.auth('alice', ['acme']))).toMatchObject(UNAUTH);
  });
});

describe('OIDC (JWT) identity', () => {
  let api: TestApi;
  let both: TestApi;
  beforeAll(async () => {
    api = await h.startApi({ identity: { oidc: { url: h.issuer.url } } });
    // dev identity switched on as well: JWT must win, the headers must not work
    both = await h.startApi({ identity: { oidc: { url: h.issuer.url }, devAlsoSet: true } });
  });
  afterAll(async () => {
    await api.close();
    await both.close();
  });

  it('accepts a token from the configured issuer', async () => {
    expect(await get(api, '/api/me', await h.issuer.auth('alice', ['acme']))).toMatchObject({
      status: 200,
      body: { subject: 'alice', organizations: ['acme'], canSubmit: false },
    });
    expect(await get(both, '/api/me', await h.issuer.auth('alice'))).toMatchObject({ status: 200, body: { subject: 'alice', organizations: [] } });
  });

  it('ignores the dev headers even when dev identity is also enabled', async () => {
    expect(await get(api, '/api/me', devHeaders('alice', ['acme']))).toMatchObject(UNAUTH);
    expect(await get(both, '/api/me', devHeaders('alice', ['acme']))).toMatchObject(UNAUTH);
    expect(await get(both, '/api/archives', devHeaders('alice', ['acme']))).toMatchObject(UNAUTH);
    // the token decides who you are, not the headers beside it
    const r = await get(both, '/api/me', { ...(await h.issuer.auth('alice', ['acme'])), ...devHeaders('mallory', ['evil']) });
    expect(r).toMatchObject({ status: 200, body: { subject: 'alice', organizations: ['acme'] } });
  });

  it('renders the token picker', async () => {
    // the page holds a form per identity mode; its config says which one the API runs in
    const page = await get(both, '/');
    expect(page.body).toContain('id="token"');
    expect(await get(both, '/picker/config.json')).toMatchObject({ status: 200, body: { mode: 'oidc' } });
  });

  /** A token naming this issuer's key, issuer and audience, for each case below to finish and sign. */
  const fromIssuer = (claims: JWTPayload = {}, alg = 'ES256') =>
    new SignJWT(claims).setProtectedHeader({ alg, kid: h.issuer.key.kid }).setIssuer(h.issuer.url).setAudience(h.issuer.audience);

  const bad: [string, () => Promise<string>][] = [
    [
      'expired',
      async () => signIssuerToken(h.issuer.key, h.issuer.url, h.issuer.audience, { subject: 'alice', ttlSeconds: 60 }, Math.floor(Date.now() / 1000) - 3600),
    ],
    ['from another issuer', async () => otherIssuer.mint({ subject: 'alice', organizations: ['acme'] })],
    ['signed by the right key but naming another issuer', async () => signIssuerToken(h.issuer.key, otherIssuer.url, h.issuer.audience, { subject: 'alice' })],
    ['issuer with a trailing slash', async () => signIssuerToken(h.issuer.key, `${h.issuer.url}/`, h.issuer.audience, { subject: 'alice' })],
    ['for another audience', async () => signIssuerToken(h.issuer.key, h.issuer.url, 'someone-else', { subject: 'alice' })],
    [
      'signed by an unknown key with the right kid',
      async () => signIssuerToken({ ...(await generateIssuerKey()), kid: h.issuer.key.kid }, h.issuer.url, h.issuer.audience, { subject: 'alice' }),
    ],
    [
      'alg none',
      async () => {
        const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
        const payload = base64url.encode(JSON.stringify({ iss: h.issuer.url, aud: h.issuer.audience, sub: 'alice', exp: Math.floor(Date.now() / 1000) + 300 }));
        return `${header}.${payload}.`;
      },
    ],
    [
      'HS256 keyed with the public key (algorithm confusion)',
      async () =>
        fromIssuer({ organizations: ['acme'] }, 'HS256')
          .setSubject('alice')
          .setExpirationTime('5m')
          .sign(new TextEncoder().encode(JSON.stringify(h.issuer.key.publicJwk))),
    ],
    ['without exp', async () => fromIssuer().setSubject('alice').sign(h.issuer.key.privateKey)],
    ['without sub', async () => fromIssuer().setExpirationTime('5m').sign(h.issuer.key.privateKey)],
    ['with a subject OpenFGA would misread', async () => signIssuerToken(h.issuer.key, h.issuer.url, h.issuer.audience, { subject: 'alice#member' })],
    [
      'with organizations that are not strings',
      async () =>
        fromIssuer({ organizations: [1, 2] })
          .setSubject('alice')
          .setExpirationTime('5m')
          .sign(h.issuer.key.privateKey),
    ],
    ['not yet valid', async () => fromIssuer().setSubject('alice').setNotBefore('1h').setExpirationTime('2h').sign(h.issuer.key.privateKey)],
    [
      'with a tampered payload',
      async () => {
        const [head, , s] = (await h.issuer.mint({ subject: 'alice', organizations: [] })).split('.');
        return `${head}.${base64url.encode(JSON.stringify({ iss: h.issuer.url, aud: h.issuer.audience, sub: 'alice', organizations: ['acme'], exp: Math.floor(Date.now() / 1000) + 300 }))}.${s}`;
      },
    ],
    ['malformed', async () => 'not.a.jwt'],
    ['garbage', async () => 'abc'],
    ['oversize', async () => 'a'.repeat(9000)],
  ];

  it.each(bad)('refuses a token %s with 401', async (_name, make) => {
    const headers = { authorization: `Bearer ${await make()}` };
    expect(await get(api, '/api/me', headers)).toMatchObject(UNAUTH);
    expect(await get(api, '/api/archives', headers)).toMatchObject(UNAUTH);
    expect(await post(api, '/api/archives/00000000-0000-4000-8000-000000000000/url', headers)).toMatchObject(UNAUTH);
  });

  it('a token accepted (and remembered as verified) is no pass for a tampered copy of it', async () => {
    const token = await h.issuer.mint({ subject: 'alice', organizations: [] });
    const [head, p, sig] = token.split('.') as [string, string, string];
    expect(await get(api, '/api/me', { authorization: `Bearer ${token}` })).toMatchObject({ status: 200, body: { subject: 'alice', organizations: [] } });
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const widened = `${head}.${base64url.encode(JSON.stringify({ ...claims, organizations: ['acme'] }))}.${sig}`;
    const resigned = `${head}.${p}.${sig.slice(0, -4)}${sig.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    for (const forged of [widened, resigned]) expect(await get(api, '/api/me', { authorization: `Bearer ${forged}` })).toMatchObject(UNAUTH);
    expect(await get(api, '/api/me', { authorization: `Bearer ${token}` })).toMatchObject({ status: 200, body: { subject: 'alice', organizations: [] } });
  });

  it.each([['Basic YWxpY2U6eA=='], ['Bearer'], ['Bearer '], ['bearer x y'], ['Token abc']])('refuses authorization %j with 401', async (auth) => {
    expect(await get(api, '/api/me', { authorization: auth })).toMatchObject(UNAUTH);
  });

  it('answers 503 (not 401) when the issuer cannot be reached, and recovers once it can', async () => {
    // a port that answers nothing, then the issuer's discovery
    const blackhole = createServer((_req, res) => {
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => blackhole.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(blackhole.address() as AddressInfo).port}`;
    const down = await h.startApi({ identity: { oidc: { url } } });
    try {
      const token = await signIssuerToken(h.issuer.key, url, h.issuer.audience, { subject: 'alice' });
      const r = await get(down, '/api/me', { authorization: `Bearer ${token}` });
      expect(r).toMatchObject({ status: 503, body: { error: 'identity provider unavailable' } });
      // without a token there is nothing to verify: still 401
      expect(await get(down, '/api/me')).toMatchObject(UNAUTH);
    } finally {
      await down.close();
      blackhole.close();
    }
  });

  it('the resolver discovers jwks_uri once and refuses a discovery document naming another issuer', async () => {
    let calls = 0;
    const counting: typeof fetch = async (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const resolver = oidcResolver({ issuer: h.issuer.url, audience: h.issuer.audience, fetchImpl: counting });
    const auth = await h.issuer.auth('alice');
    for (let i = 0; i < 3; i++) expect((await resolver.resolve(auth)).identity?.subject).toBe('alice');
    expect(calls).toBe(1);
    const lying = oidcResolver({ issuer: `${h.issuer.url}/`, audience: h.issuer.audience });
    await expect(lying.resolve(auth)).rejects.toThrow(/names issuer/);
  });
});

describe('the dev issuer', () => {
  it('publishes discovery and JWKS, mints tokens with the documented claims', async () => {
    const disco = (await (await fetch(`${h.issuer.url}/.well-known/openid-configuration`)).json()) as Record<string, string>;
    expect(disco.issuer).toBe(h.issuer.url);
    expect(disco.jwks_uri).toBe(`${h.issuer.url}/jwks.json`);
    const jwks = (await (await fetch(disco.jwks_uri!)).json()) as { keys: Record<string, string>[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).not.toHaveProperty('d'); // never the private part
    const res = await fetch(`${h.issuer.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subject: 'alice', organizations: ['acme'], ttlSeconds: 120 }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { access_token: string; token_type: string; expires_in: number };
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(120);
    const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: h.issuer.url, aud: 'capture-ledger', sub: 'alice', organizations: ['acme'] });
    expect((claims.exp as number) - (claims.iat as number)).toBe(120);
  });

  it.each<[Record<string, unknown>, string]>([
    [{}, 'missing subject'],
    [{ subject: '' }, 'empty subject'],
    [{ subject: 5 }, 'wrong type'],
    [{ subject: 'a', organizations: 'acme' }, 'organizations not an array'],
    [{ subject: 'a', ttlSeconds: 86_400 }, 'ttl too long'],
    [{ subject: 'a', ttlSeconds: '60' }, 'ttl as a string'],
    [{ subject: 'a', admin: true }, 'unknown key'],
    [{ subject: 'a b' }, 'subject with a space'],
  ])('refuses %j (%s) with 400', async (body) => {
    const res = await fetch(`${h.issuer.url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(400);
  });

  it('binds to loopback only', async () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('0.0.0.0')).toBe(false);
    expect(isLoopback('::')).toBe(false);
    expect(isLoopback('192.168.1.10')).toBe(false);
    await expect(startIssuer({ port: 0, host: '0.0.0.0' })).rejects.toThrow(/loopback/);
  });
});
