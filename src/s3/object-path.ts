import { extendedEncodeURIComponent } from '@smithy/core/protocols';

/**
 * `/bucket/key`, path-style, with every key segment encoded as the SDK's S3 serializer encodes a
 * greedy `{Key+}` label. S3 signs the path as sent (signers are built with `uriEscapePath:
 * false`), so this one string is both signed and sent. `basePath` is the endpoint URL's path as
 * it is (its trailing slashes are dropped here).
 */
export function objectPath(basePath: string, bucket: string, key: string): string {
  const base = basePath.replace(/\/+$/, '');
  // keys made of unreserved characters (every key the ledger writes) encode to themselves
  const path = UNRESERVED_PATH.test(key) ? key : key.split('/').map(extendedEncodeURIComponent).join('/');
  return `${base}/${extendedEncodeURIComponent(bucket)}/${path}`;
}

/** what extendedEncodeURIComponent leaves as it is, and the segments' '/' */
const UNRESERVED_PATH = /^[A-Za-z0-9\-_.~/]*$/;
