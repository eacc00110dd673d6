// The HTTP probe the services' health checks share.

/** true when `url` answers 200 with a body `pred` accepts, else why not (a health check's answer). */
export async function httpOk(url, pred = () => true) {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
  const body = await res.text();
  if (res.status !== 200) return `HTTP ${res.status} from ${url}: ${body.slice(0, 200)}`;
  return pred(body) ? true : `unexpected answer from ${url}: ${body.slice(0, 200)}`;
}
