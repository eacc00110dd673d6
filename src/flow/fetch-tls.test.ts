// The guarded fetcher over https, against a real TLS server on 127.0.0.2 whose certificate chain
// (a test CA and a leaf it signed, made here with openssl) is trusted only through the fetcher's
// `ca`: the exchange carries the address connected to and the chain the server sent, and the
// WACZ written from it holds that chain in a metadata record warcio reads.
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWithWarcio, warcFieldsOf } from '../../test/support/warcio.ts';
import { createAddressPolicy, parseAllowlist } from '../domain/address-policy.ts';
import { readWacz } from '../domain/wacz/read.ts';
import { WARC_PATH, writeWacz } from '../domain/wacz/write.ts';
import { createGuardedFetcher, FetchError } from './fetch.ts';

const policy = createAddressPolicy(parseAllowlist('127.0.0.2/32'));
let dir: string;
let server: Server;
let url: string;
let caPem: string;
let leafDer: Buffer;
let caDer: Buffer;

/** A CA and a leaf for IP 127.0.0.2 signed by it, P-256, valid a day. */
function makeChain(): { caPem: string; leafPem: string; leafKey: string } {
  const at = (f: string): string => join(dir, f);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      at('ca.key'),
      '-out',
      at('ca.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=capture-ledger test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign',
    ],
    { stdio: 'pipe' },
  );
  execFileSync('openssl', ['req', ...ec, '-keyout', at('leaf.key'), '-out', at('leaf.csr'), '-subj', '/CN=127.0.0.2'], { stdio: 'pipe' });
  writeFileSync(at('leaf.ext'), 'subjectAltName=IP:127.0.0.2\nbasicConstraints=CA:FALSE\n');
  execFileSync(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      at('leaf.csr'),
      '-CA',
      at('ca.pem'),
      '-CAkey',
      at('ca.key'),
      '-CAcreateserial',
      '-out',
      at('leaf.pem'),
      '-days',
      '1',
      '-extfile',
      at('leaf.ext'),
    ],
    { stdio: 'pipe' },
  );
  return { caPem: readFileSync(at('ca.pem'), 'utf8'), leafPem: readFileSync(at('leaf.pem'), 'utf8'), leafKey: readFileSync(at('leaf.key'), 'utf8') };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fetch-tls-'));
  const chain = makeChain();
  caPem = chain.caPem;
  caDer = new X509Certificate(chain.caPem).raw;
  leafDer = new X509Certificate(chain.leafPem).raw;
  server = createServer({ key: chain.leafKey, cert: chain.leafPem + chain.caPem }, (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<title>secure</title>'),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
  url = `https://127.0.0.2:${(server.address() as AddressInfo).port}/page`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('the guarded fetcher over https', () => {
  it('keeps the address connected to, the TLS session and the chain the server sent, leaf first', async () => {
    const x = await createGuardedFetcher(policy, { ca: [caPem] })({ url, method: 'GET', headers: [] });
    expect(x.response.status).toBe(200);
    expect(x.response.body.toString()).toBe('<title>secure</title>');
    expect(x.ip).toBe('127.0.0.2');
    expect(x.tls?.protocol).toMatch(/^TLSv1\.[23]$/);
    expect(x.tls?.cipher).toMatch(/^TLS_/);
    expect(x.tls?.certificates.map((c) => c.toString('hex'))).toEqual([leafDer.toString('hex'), caDer.toString('hex')]);
  });

  it('refuses the server when its CA is not trusted (the certificate is checked, not only recorded)', async () => {
    const err = await createGuardedFetcher(policy)({ url, method: 'GET', headers: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FetchError);
    expect((err as FetchError).message).toMatch(/certificate/i);
  });

  it('the WACZ of the exchange holds the chain in a metadata record that warcio reads', async () => {
    const x = await createGuardedFetcher(policy, { ca: [caPem] })({ url, method: 'GET', headers: [] });
    const wacz = await readWacz(await writeWacz({ exchanges: [x], pages: [{ url, ts: x.date }], software: 's' }));
    const records = await readWithWarcio(wacz.entries.get(WARC_PATH)!.data);
    const response = records.find((r) => r.type === 'response')!;
    expect(response.header('WARC-IP-Address')).toBe('127.0.0.2');
    const meta = records.find((r) => r.type === 'metadata')!;
    expect(meta.header('WARC-Concurrent-To')).toBe(response.header('WARC-Record-ID'));
    const certs = warcFieldsOf(meta.content)
      .filter(([k]) => k === 'peer-certificate')
      .map(([, v]) => new X509Certificate(Buffer.from(v, 'base64')));
    expect(certs.map((c) => c.subject)).toEqual(['CN=127.0.0.2', 'CN=capture-ledger test CA']);
    expect(certs[0]!.checkIssued(certs[1]!)).toBe(true);
  });
});
