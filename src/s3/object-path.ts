import { extendedEncodeURIComponent } from '@smithy/core/protocols';

/**
 * `/bucket/key`, path-style, with every key segment encoded as the SDK's S3 serializer encodes a
 * greedy `{Key+}` label. S3 signs the path as sent (signers are built with `uriEscapePath:
 * false`), so this one string is both signed and sent.
 */
export function objectPath(basePath: string, bucket: string, key: string): string {
  const base = basePath.replace(/\/+$/, '');
  return `${base}/${extendedEncodeURIComponent(bucket)}/${key.split('/').map(extendedEncodeURIComponent).join('/')}`;
}
