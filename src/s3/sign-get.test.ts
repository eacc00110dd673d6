import fc from 'fast-check';
import { Sha256 } from '@smithy/core/checksum';
import { extendedEncodeURIComponent, HttpRequest } from '@smithy/core/protocols';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { objectPath } from './object-path.ts';
import { createGetPresigner, createGetSigner } from './sign-get.ts';

const creds = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

/** none, SeaweedFS's (32 hex digits), or any string S3 might give, to be escaped as the SDK does */
const versions = fc.option(fc.oneof(fc.stringMatching(/^[0-9a-f]{32}$/), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 })), { nil: undefined });

/** A GET of `path` on `host` (with its port), of one version when versionId is given, as the SDK builds it. */
function getRequest(host: string, path: string, versionId: string | undefined): HttpRequest {
  const [hostname, port] = host.split(':');
  return new HttpRequest({
    method: 'GET',
    protocol: 'http:',
    hostname: hostname!,
    ...(port ? { port: Number(port) } : {}),
    path,
    query: versionId !== undefined ? { versionId } : {},
    headers: { host },
  });
}

/** The SDK's signer, configured as object-reader.ts configured it before (and as the S3 client signs). */
function sdkSign(region: string, host: string, path: string, signingDate: Date, versionId?: string) {
  const signer = new SignatureV4({ service: 's3', region, credentials: creds, sha256: Sha256, uriEscapePath: false, applyChecksum: true });
  return signer.sign(getRequest(host, path, versionId), { signingDate });
}

describe('createGetSigner', () => {
  it('signs every GET exactly as the SDK signer does (same headers, same Authorization), of a version or not', async () => {
    const key = fc.array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }).map((segments) => segments.join('/'));
    const at = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true });
    const host = fc.constantFrom('127.0.0.1:8333', 's3.example.com', 'localhost:9000');
    const region = fc.constantFrom('us-east-1', 'eu-west-3');
    await fc.assert(
      fc.asyncProperty(key, at, host, region, versions, async (k, when, h, r, versionId) => {
        const path = objectPath('/', 'captures', k);
        const ours = createGetSigner({ region: r, ...creds })(h, path, when, versionId);
        const sdk = await sdkSign(r, h, path, when, versionId);
        expect(ours).toEqual({
          host: h,
          'x-amz-content-sha256': sdk.headers['x-amz-content-sha256'],
          'x-amz-date': sdk.headers['x-amz-date'],
          authorization: sdk.headers.authorization,
        });
      }),
      { numRuns: 300 },
    );
  });

  it('derives a new signing key when the day changes', async () => {
    const sign = createGetSigner({ region: 'us-east-1', ...creds });
    for (const when of ['2026-11-30T23:59:59.999Z', '2026-12-01T00:00:00.000Z', '2026-11-30T12:00:00.000Z']) {
      const d = new Date(when);
      expect(sign('h:1', '/b/k', d).authorization).toBe((await sdkSign('us-east-1', 'h:1', '/b/k', d)).headers.authorization);
    }
  });

  it('a different secret gives a different signature', () => {
    const d = new Date('2026-01-01T00:00:00Z');
    const a = createGetSigner({ region: 'us-east-1', ...creds })('h', '/b/k', d).authorization;
    const b = createGetSigner({ region: 'us-east-1', ...creds, secretAccessKey: 'other' })('h', '/b/k', d).authorization;
    expect(a).not.toBe(b);
  });
});

describe('createGetPresigner', () => {
  it('gives the query S3RequestPresigner gives for the same GET, time, lifetime and object version', async () => {
    const key = fc.array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }).map((segments) => segments.join('/'));
    const at = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true });
    const host = fc.constantFrom('127.0.0.1:8333', 's3.example.com');
    const accessKeyId = fc.constantFrom('AKIDEXAMPLE', 'dev key/with+odd=chars');
    await fc.assert(
      fc.asyncProperty(key, at, host, accessKeyId, fc.integer({ min: 1, max: 604_800 }), versions, async (k, when, h, id, expiresIn, versionId) => {
        const path = objectPath('/', 'captures', k);
        const presign = createGetPresigner({ region: 'eu-west-3', accessKeyId: id, secretAccessKey: creds.secretAccessKey });
        const ours = presign(h, path, expiresIn, { now: when, ...(versionId !== undefined ? { versionId } : {}) });
        const presigner = new S3RequestPresigner({
          credentials: { accessKeyId: id, secretAccessKey: creds.secretAccessKey },
          region: 'eu-west-3',
          sha256: Sha256,
        });
        const signed = await presigner.presign(getRequest(h, path, versionId), { expiresIn, signingDate: when });
        const sdk = Object.entries(signed.query as Record<string, string>)
          .map(([name, v]) => `${extendedEncodeURIComponent(name)}=${extendedEncodeURIComponent(v)}`)
          .join('&');
        expect(ours).toBe(sdk);
      }),
      { numRuns: 300 },
    );
  });
});
