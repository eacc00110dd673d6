// Reporting a level back to the ledger: POST reportUrl with a Bearer JWT the issuer grants the
// flow for its client secret (subject "capture-flow", no organizations), and the level's
// capability from the dispatch in the CAPABILITY_HEADER (the flow holds no grant on any
// organization: the capability is what ties the report to its dispatch). The report activity
// (activities/report.ts) retries network errors, 429 and 5xx until the level's deadline; any other
// answer is final — a 401 or 403 is refused for good, and says so loudly.
import { basicAuthorization, FLOW_CLIENT_ID, FLOW_SUBJECT } from '../domain/flow-client.ts';
import type { FlowIdentity } from './config.ts';
import type { ReportOutcome } from './workflows/messages.ts';

export const REPORT_SUBJECT = FLOW_SUBJECT;

/** Headers that authenticate one report for an organization. */
export type ReportAuth = (orgId: string) => Promise<Record<string, string>>;

/**
 * The flow's own token, from `${issuer}/token` for each report: the client-credentials grant with
 * the secret only the flow holds (sent as Basic credentials). Its subject is the flow's reporter.
 */
export function clientCredentialsAuth(issuer: string, secret: string): ReportAuth {
  const authorization = basicAuthorization({ id: FLOW_CLIENT_ID, secret });
  return async () => {
    const res = await fetch(`${issuer.replace(/\/+$/, '')}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
      body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok)
      throw new Error(
        `the issuer at ${issuer} answered ${res.status} to the flow's client-credentials grant (is CAPTURE_LEDGER_FLOW_CLIENT_SECRET the issuer's?)`,
      );
    const body = (await res.json()) as { access_token?: unknown };
    if (typeof body.access_token !== 'string') throw new Error(`the issuer at ${issuer} gave no access_token`);
    return { authorization: `Bearer ${body.access_token}` };
  };
}

/** The dev-header identity, for an API running with CAPTURE_LEDGER_DEV_IDENTITY=1 and no issuer. */
export function devHeaderAuth(subject = REPORT_SUBJECT): ReportAuth {
  return async (orgId) => ({ 'x-capture-ledger-subject': subject, 'x-capture-ledger-organizations': orgId });
}

/** What the configuration says the API will accept: the flow's JWT when an issuer is set, else the dev headers. */
export function authFromConfig(identity: FlowIdentity): ReportAuth {
  if (identity.mode === 'oidc') {
    if (identity.flowClientSecret === undefined)
      throw new Error(
        `CAPTURE_LEDGER_FLOW_CLIENT_SECRET is not set: the flow cannot get its token from ${identity.issuer} (npm start generates one into .env.local; the issuer needs the same)`,
      );
    return clientCredentialsAuth(identity.issuer, identity.flowClientSecret);
  }
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
