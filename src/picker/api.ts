// The picker's only way to the data: the public HTTP API, with the caller's credentials as the
// identity mode asks for them, and every failure put in words.

export type Mode = 'dev' | 'oidc' | 'none';

export interface PickerConfig {
  mode: Mode;
  replayUrl: string;
  pollMs: number;
}

export interface ErrorBody {
  error?: string;
  details?: { field: string; message: string }[];
}

/** status 0: the API did not answer at all */
export type Answer<T> =
  { ok: true; status: number; body: T; headers: Headers } | { ok: false; status: number; body: ErrorBody; headers: Headers | null; message?: string };

let mode: Mode = 'none';

export function setMode(m: Mode): void {
  mode = m;
}

const field = (id: string): string => (document.getElementById(id) as HTMLInputElement | HTMLTextAreaElement | null)?.value.trim() ?? '';

/** The identity headers: the dev names as typed, or the pasted bearer token. */
export function headers(): Record<string, string> {
  if (mode === 'dev') {
    const h: Record<string, string> = { 'X-Capture-ledger-Subject': field('subject') };
    const orgs = field('organizations');
    if (orgs) h['X-Capture-ledger-Organizations'] = orgs;
    return h;
  }
  if (mode === 'oidc') return { Authorization: `Bearer ${field('token')}` };
  return {};
}

export async function call<T>(path: string, init: { method?: 'GET' | 'POST' } = {}): Promise<Answer<T>> {
  let res: Response;
  try {
    res = await fetch(path, { method: init.method ?? 'GET', headers: headers() });
  } catch (e) {
    return { ok: false, status: 0, body: {}, headers: null, message: e instanceof Error ? e.message : String(e) };
  }
  const body: unknown = await res.json().catch(() => ({}));
  if (res.ok) return { ok: true, status: res.status, body: body as T, headers: res.headers };
  return { ok: false, status: res.status, body: (body ?? {}) as ErrorBody, headers: res.headers };
}

type Failure = Extract<Answer<unknown>, { ok: false }>;

const refusedDetails = (a: Failure): string => a.body.details?.map((d) => `${d.field} ${d.message}`).join('; ') || a.body.error || 'bad request';

const unauthenticated = (): string =>
  mode === 'oidc'
    ? 'Not accepted (401): the token has expired, is malformed, or is not from the configured issuer. Paste a fresh one.'
    : 'Not accepted (401): give a subject name.';

/** The words for each status a person may meet; `what` names the thing asked for. */
const EXPLANATIONS: Record<number, (a: Failure, what: string) => string> = {
  0: (a) => `The API did not answer (${a.message ?? 'network error'}). Is it running?`,
  400: (a) => `The API refused the request (400): ${refusedDetails(a)}.`,
  401: unauthenticated,
  403: (a) => `Not allowed (403): ${a.body.error ?? 'you may not do this'}.`,
  404: (_a, what) => `Not found (404): ${what} does not exist, or you may not see it.`,
  429: () => 'Too many requests (429): wait a moment and try again.',
  503: (a) => `A service the API depends on is unavailable (503)${a.body.error ? `: ${a.body.error}` : ''}. Try again in a moment.`,
};

/** What went wrong, for a person. */
export function explain(a: Failure, what = 'it'): string {
  const words = EXPLANATIONS[a.status];
  return words !== undefined ? words(a, what) : `Error ${a.status}: ${a.body.error ?? 'the API could not answer'}.`;
}

export function setStatus(text: string, isError = false): void {
  const el = document.getElementById('status');
  if (el === null) return;
  el.textContent = text;
  el.className = isError ? 'error' : '';
}

/** `Link: <…>; rel="next"`, or null. */
export function nextLink(h: Headers): string | null {
  const m = /<([^>]+)>\s*;\s*rel="next"/.exec(h.get('link') ?? '');
  return m?.[1] ?? null;
}
