// A minimal AWS Signature V4 signer for the few S3 calls stack:up makes (health, bucket creation
// and versioning) without needing node_modules.
import { createHash, createHmac } from 'node:crypto';

const sha256 = (s) => createHash('sha256').update(s).digest('hex');
const hmac = (k, s) => createHmac('sha256', k).update(s).digest();

/** `query` is sent and signed as given: one key, or keys in order, already encoded (`versioning=`). */
export async function s3Request({ endpoint, region, accessKeyId, secretAccessKey }, method, path, { timeoutMs = 5000, query = '', body = '' } = {}) {
  const url = new URL(path + (query ? `?${query}` : ''), endpoint);
  const now = new Date();
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const payloadHash = sha256(body);
  const headers = { host: url.host, 'x-amz-content-sha256': payloadHash, 'x-amz-date': amzDate };
  const signedHeaders = Object.keys(headers).sort().join(';');
  const canonical = [
    method,
    url.pathname.split('/').map(encodeURIComponent).join('/'),
    query,
    Object.keys(headers)
      .sort()
      .map((k) => `${k}:${headers[k]}\n`)
      .join(''),
    signedHeaders,
    payloadHash,
  ].join('\n');
  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  let key = hmac('AWS4' + secretAccessKey, day);
  for (const part of [region, 's3', 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  const { host: _host, ...sendHeaders } = headers;
  const res = await fetch(url, {
    method,
    ...(body ? { body } : {}),
    headers: { ...sendHeaders, authorization: `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}` },
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, body: await res.text() };
}
