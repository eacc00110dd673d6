// The capture flow as an OAuth client of the issuer (RFC 6749 §4.4, client credentials): the token
// it reports with is had only with a secret it holds (CAPTURE_LEDGER_FLOW_CLIENT_SECRET), the
// issuer configured with the same one. Its subject is the flow's reporter identity, which the dev
// issuer's anyone-token refuses to mint.

/** the flow's client id at the issuer */
export const FLOW_CLIENT_ID = 'capture-flow';
/** the subject of the flow's token: who `reported_by` says reported a level */
export const FLOW_SUBJECT = 'capture-flow';
/** below this a generated secret would be guessable; `npm start` generates 43 characters */
export const MIN_FLOW_SECRET_LENGTH = 32;

export interface ClientCredentials {
  id: string;
  secret: string;
}

// RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined with ':'
const formEncode = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+');
const formDecode = (s: string): string => decodeURIComponent(s.replace(/\+/g, '%20'));

/** The Authorization header value of client_secret_basic. */
export function basicAuthorization(c: ClientCredentials): string {
  return `Basic ${Buffer.from(`${formEncode(c.id)}:${formEncode(c.secret)}`).toString('base64')}`;
}

/** A client_secret_basic Authorization header; undefined when it is not Basic, null when it is broken. */
export function parseBasicAuthorization(header: string | undefined): ClientCredentials | undefined | null {
  const m = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header ?? '');
  if (header === undefined || !/^Basic\b/i.test(header)) return undefined;
  if (m === null) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  try {
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}
