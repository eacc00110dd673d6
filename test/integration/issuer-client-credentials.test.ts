// harness: not used because it tests the dev issuer alone (two of its own, one without the flow's secret).
// The token the capture flow reports with is had only with a secret the flow holds (issue 25,
// deliver 3): the dev issuer's client-credentials grant for client capture-flow. The anyone-token
// (JSON /token, for people) refuses the flow's subject.
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization, FLOW_CLIENT_ID, FLOW_SUBJECT } from '../../src/domain/flow-client.ts';
import { authFromConfig, clientCredentialsAuth } from '../../src/flow/report.ts';
import { startIssuer, type RunningIssuer } from '../../src/issuer/issuer.ts';

const SECRET = 'flow-secret-for-this-test-0123456789abcdef';
let issuer: RunningIssuer;
let unconfigured: RunningIssuer;

beforeAll(async () => {
  [issuer, unconfigured] = await Promise.all([startIssuer({ port: 0, flowClientSecret: SECRET }), startIssuer({ port: 0 })]);
});
afterAll(async () => {
  await issuer?.close();
  await unconfigured?.close();
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function token(form: Record<string, string> | string, headers: Record<string, string> = {}, at = issuer): Promise<Answer> {
  const body = typeof form === 'string' ? form : new URLSearchParams(form).toString();
  const res = await fetch(`${at.url}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

const basic = (secret: string, id = FLOW_CLIENT_ID) => ({ authorization: basicAuthorization({ id, secret }) });
const grant = { grant_type: 'client_credentials' };

async function claimsOf(answer: Answer) {
  const jwks = createRemoteJWKSet(new URL(`${issuer.url}/jwks.json`));
  return (await jwtVerify(answer.body.access_token as string, jwks, { issuer: issuer.url, audience: issuer.audience })).payload;
}

describe('the anyone-token', () => {
  it('refuses the flow’s subject (403), with or without organizations, and mints nothing', async () => {
    for (const body of [{ subject: FLOW_SUBJECT }, { subject: FLOW_SUBJECT, organizations: ['acme'] }]) {
      const res = await fetch(`${issuer.url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(403);
      const answer = (await res.json()) as Record<string, unknown>;
      expect(answer).not.toHaveProperty('access_token');
      expect(answer.error).toMatch(/client secret/);
    }
  });

  it('still mints for a person', async () => {
    const res = await fetch(`${issuer.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subject: 'alice' }),
    });
    expect(res.status).toBe(200);
  });
});

describe('the client-credentials grant', () => {
  it('with the secret as Basic credentials: a token for the flow’s subject, no organizations, not to be cached', async () => {
    const answer = await token(grant, basic(SECRET));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ token_type: 'Bearer', expires_in: 300 });
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const claims = await claimsOf(answer);
    expect(claims.sub).toBe(FLOW_SUBJECT);
    expect(claims.organizations).toEqual([]);
  });

  it('with the secret in the form (client_secret_post): the same token', async () => {
    const answer = await token({ ...grant, client_id: FLOW_CLIENT_ID, client_secret: SECRET });
    expect(answer.status).toBe(200);
    expect((await claimsOf(answer)).sub).toBe(FLOW_SUBJECT);
  });

  it.each<[string, Record<string, string>, Record<string, string>]>([
    ['no credentials', grant, {}],
    ['a client id without its secret', { ...grant, client_id: FLOW_CLIENT_ID }, {}],
    ['a wrong secret', grant, basic(`${SECRET}x`)],
    ['a prefix of the secret', { ...grant, client_id: FLOW_CLIENT_ID, client_secret: SECRET.slice(0, 20) }, {}],
    ['the secret for another client id', grant, basic(SECRET, 'alice')],
    ['broken Basic credentials', grant, { authorization: 'Basic !!!' }],
  ])('%s: 401 invalid_client, no token', async (_what, form, headers) => {
    const answer = await token(form, headers);
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe('invalid_client');
    expect(answer.body).not.toHaveProperty('access_token');
    expect(answer.headers.get('www-authenticate')).toMatch(/^Basic /);
  });

  it('an issuer configured without a secret grants no client, whatever it is sent (401)', async () => {
    const answer = await token(grant, basic(''), unconfigured);
    expect(answer.status).toBe(401);
    expect(answer.body.error_description).toMatch(/CAPTURE_LEDGER_FLOW_CLIENT_SECRET/);
  });

  it.each<[string, Record<string, string> | string, Record<string, string>, string]>([
    ['another grant type', { grant_type: 'password', username: 'a', password: 'b' }, {}, 'unsupported_grant_type'],
    ['credentials in both places', { ...grant, client_id: FLOW_CLIENT_ID, client_secret: SECRET }, basic(SECRET), 'invalid_request'],
  ])('%s: 400 %s', async (_what, form, headers, error) => {
    const answer = await token(form, headers);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe(error);
  });

  it.each<[string, string]>([
    ['a parameter given twice', `grant_type=client_credentials&grant_type=client_credentials`],
    ['no grant type', `client_id=${FLOW_CLIENT_ID}`],
    ['an empty body', ''],
  ])('%s: 400 naming the problem, no token', async (_what, body) => {
    const answer = await token(body, basic(SECRET));
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toMatch(/grant_type|body|more than once/);
  });
});

describe('the flow’s side', () => {
  it('clientCredentialsAuth gets the flow’s token with the secret, and fails loudly with a wrong one', async () => {
    const headers = await clientCredentialsAuth(issuer.url, SECRET)('acme');
    expect(headers.authorization).toMatch(/^Bearer ey/);
    await expect(clientCredentialsAuth(issuer.url, 'wrong-secret')('acme')).rejects.toThrow(/answered 401/);
  });

  it('authFromConfig uses the grant when an issuer is set, and refuses to run without the secret', async () => {
    const identity = { mode: 'oidc', issuer: issuer.url, audience: issuer.audience, devIdentityAlsoSet: false } as const;
    expect(() => authFromConfig(identity)).toThrow(/CAPTURE_LEDGER_FLOW_CLIENT_SECRET is not set/);
    const headers = await authFromConfig({ ...identity, flowClientSecret: SECRET })('acme');
    const claims = await claimsOf({ status: 200, body: { access_token: headers.authorization!.slice('Bearer '.length) }, headers: new Headers() });
    expect(claims.sub).toBe(FLOW_SUBJECT);
  });
});
