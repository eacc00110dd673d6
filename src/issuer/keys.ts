// The dev issuer's signing key: one ES256 key pair, either generated for this process or kept in a
// directory (npm run issuer keeps it in .stack/issuer/, so a restarted issuer still verifies the
// tokens it minted before).
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';

export const ISSUER_ALG = 'ES256';

export interface IssuerKey {
  kid: string;
  privateKey: CryptoKey;
  /** the public half, as published at /jwks.json */
  publicJwk: JWK;
}

export async function generateIssuerKey(): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair(ISSUER_ALG, { extractable: true });
  const kid = randomUUID();
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: ISSUER_ALG, use: 'sig' } };
}

/** Reads `<dir>/signing-key.json`, or makes one and writes it (mode 0600). */
export async function loadOrCreateIssuerKey(dir: string): Promise<IssuerKey> {
  const file = join(dir, 'signing-key.json');
  try {
    const stored = JSON.parse(await readFile(file, 'utf8')) as { kid: string; privateJwk: JWK; publicJwk: JWK };
    return { kid: stored.kid, privateKey: (await importJWK(stored.privateJwk, ISSUER_ALG)) as CryptoKey, publicJwk: stored.publicJwk };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read the issuer key ${file}: ${(err as Error).message}`, { cause: err });
  }
  const key = await generateIssuerKey();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(
    file,
    JSON.stringify({ kid: key.kid, privateJwk: { ...(await exportJWK(key.privateKey)), kid: key.kid, alg: ISSUER_ALG }, publicJwk: key.publicJwk }),
    { mode: 0o600 },
  );
  return key;
}
