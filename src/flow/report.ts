// Reporting a level back to the ledger: POST reportUrl with a Bearer JWT from the dev issuer,
// subject "capture-flow", organizations [orgId], and the level's capability from the dispatch in
// the CAPABILITY_HEADER (the flow holds no grant on any organization: the capability is what ties
// the report to its dispatch). Network errors, 429 and 5xx are retried with exponential backoff;
// any other answer is final — a 401 or 403 is refused for good, and says so loudly.
import type { FlowIdentity } from './config.ts';
import type { ReportOutcome } from './workflows/messages.ts';

export const REPORT_SUBJECT = 'capture-flow';

/** Headers that authenticate one report for an organization. */
export type ReportAuth = (orgId: string) => Promise<Record<string, string>>;

/** Mints a token at `${issuer}/token` for each report. */
export function issuerAuth(issuer: string, subject = REPORT_SUBJECT): ReportAuth {
  return async (orgId) => {
    const res = await fetch(`${issuer.replace(/\/+$/, '')}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subject, organizations: [orgId] }),
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) throw new Error(`the issuer at ${issuer} answered ${res.status} to POST /token`);
    const body = (await res.json()) as { access_token?: unknown };
    if (typeof body.access_token !== 'string') throw new Error(`the issuer at ${issuer} gave no access_token`);
    return { authorization: `Bearer ${body.access_token}` };
  };
}

/** The dev-header identity, for an API running with CAPTURE_LEDGER_DEV_IDENTITY=1 and no issuer. */
export function devHeaderAuth(subject = REPORT_SUBJECT): ReportAuth {
  return async (orgId) => ({ 'x-capture-ledger-subject': subject, 'x-capture-ledger-organizations': orgId });
}

/** What the configuration says the API will accept: a JWT when an issuer is set, else the dev headers. */
export function authFromConfig(identity: FlowIdentity): ReportAuth {
  if (identity.mode === 'oidc') return issuerAuth(identity.issuer);
  if (identity.mode === 'dev') return devHeaderAuth();
  return async () => ({});
}

/** The ledger refused the reporter itself (its token, or the capability): retrying cannot help. */
export const refused = (status: number | undefined): boolean => status === 401 || status === 403;

/** One unmistakable line for a refused report: the crawl fails because of it. */
export function refusalLine(crawlId: string, depth: number, outcome: ReportOutcome): string {
  const last = outcome.attempts.at(-1);
  return `!!! REPORT REFUSED: level ${crawlId}/${depth} answered ${outcome.status ?? '?'} ${last?.body ?? ''} — the ledger will not take this level; check the flow's token (issuer, expiry) and that it reports the dispatch's capability. The crawl fails. !!!`;
}
