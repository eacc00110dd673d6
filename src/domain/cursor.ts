// Keyset cursors for newest-first lists (archives by capturedAt, crawls by startedAt).
//
// The spec's cursor is `before`: the timestamp of the last row a caller was given, meaning
// "strictly older than this". Alone it loses rows: every row sharing that timestamp with the
// last one falls between two pages. The tie-breaker is `beforeId`, the last row's id: with it a
// page continues at the rows that sort after (timestamp, id) in (timestamp desc, id desc) order.
// `before` alone keeps its spec meaning.
//
// Timestamps are compared at millisecond precision, the precision callers see in ISO strings
// (Postgres stores microseconds: the SQL side truncates with date_trunc('milliseconds', …) and
// orders by the same truncated value, so the SQL and `isPastCursor` agree row for row). Ids are
// lower-case UUIDs, whose string order is Postgres's uuid order.
import { InvalidInputError } from './invalid-input.ts';
import { isUuid } from './uuid.ts';

export interface PageCursor {
  /** only rows older than this (ms precision), or as old with a smaller id when `id` is set */
  before: Date;
  /** the tie-breaker: the id of the last row of the previous page, lower case */
  id?: string;
}

/** The querystring a list route accepts for its cursor (fastify JSON schema properties). */
export function cursorQuerySchema(timestampName: string) {
  return {
    before: {
      type: 'string',
      format: 'date-time',
      maxLength: 64,
      description: `ISO 8601: only rows whose ${timestampName} is strictly before it (pass the ${timestampName} of the last row you were given)`,
    },
    beforeId: {
      type: 'string',
      format: 'uuid',
      description: `the id of the last row you were given, with its ${timestampName} as before: rows sharing that ${timestampName} are then not skipped`,
    },
  } as const;
}

function invalid(field: string, message: string): InvalidInputError {
  return new InvalidInputError('invalid request', { details: [{ field: `querystring.${field}`, message }] });
}

/** Reads `before` and `beforeId` from a query; undefined when neither is given. 400 names the field. */
export function parseCursor(query: { before?: string; beforeId?: string }): PageCursor | undefined {
  const { before, beforeId } = query;
  if (before === undefined) {
    if (beforeId !== undefined) throw invalid('beforeId', 'needs before (the timestamp of the same row)');
    return undefined;
  }
  const at = new Date(before);
  if (Number.isNaN(at.getTime())) throw invalid('before', 'must be an ISO 8601 timestamp');
  if (beforeId === undefined) return { before: at };
  if (!isUuid(beforeId)) throw invalid('beforeId', 'must be a UUID');
  return { before: at, id: beforeId.toLowerCase() };
}

/** The cursor that continues after `row` (the last row of a page). */
export function cursorAfter(row: { at: Date; id: string }): PageCursor {
  return { before: new Date(row.at.getTime()), id: row.id.toLowerCase() };
}

/** The cursor as query parameters, for a "more" link: `before=<iso>&beforeId=<id>`. */
export function cursorQuery(c: PageCursor): Record<string, string> {
  return c.id === undefined ? { before: c.before.toISOString() } : { before: c.before.toISOString(), beforeId: c.id };
}

/** Newest-first order: negative when `a` comes first (later timestamp, then larger id). */
export function compareNewestFirst(a: { at: Date; id: string }, b: { at: Date; id: string }): number {
  const ta = a.at.getTime();
  const tb = b.at.getTime();
  if (ta !== tb) return tb - ta;
  const ia = a.id.toLowerCase();
  const ib = b.id.toLowerCase();
  return ia === ib ? 0 : ia < ib ? 1 : -1;
}

/** Whether `row` belongs after the cursor, i.e. on a later page. The SQL filters mirror this. */
export function isPastCursor(row: { at: Date; id: string }, c: PageCursor): boolean {
  const t = row.at.getTime();
  const b = c.before.getTime();
  if (t !== b || c.id === undefined) return t < b;
  return row.id.toLowerCase() < c.id;
}
