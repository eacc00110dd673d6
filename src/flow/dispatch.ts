// What the receiver accepts as a dispatch: the contract's shape (JSON schema, checked by fastify)
// and the checks a schema cannot say (http(s) URLs, notBefore dates).
import { Dispatch, type DispatchBody } from '../domain/contract.ts';
import { parseNotBefore } from './level.ts';

/** The contract's dispatch schema, as the route checks it. */
export const dispatchSchema = Dispatch;

function httpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** What is wrong with a dispatch the schema let through, or undefined. */
export function validateDispatch(d: DispatchBody): { detail: string; urls?: string[] } | undefined {
  const bad = d.pages.filter((p) => !httpUrl(p.url)).map((p) => p.url);
  if (bad.length > 0) return { detail: 'pages must be http(s) URLs', urls: bad.slice(0, 20) };
  if (!httpUrl(d.reportUrl)) return { detail: 'reportUrl must be an http(s) URL' };
  try {
    parseNotBefore(d.notBefore);
  } catch (err) {
    return { detail: (err as Error).message };
  }
  return undefined;
}
