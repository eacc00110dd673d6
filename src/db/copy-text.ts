// Rows in COPY's text format (https://www.postgresql.org/docs/current/sql-copy.html, "Text
// Format"): one line a row, fields separated by tabs, NULL written \N, and a backslash, newline,
// carriage return or tab inside a value written as its backslash escape. Nothing else is escaped:
// every other character is taken as it is, in the connection's encoding (UTF-8).

/** A field as COPY takes it: text, a number, or NULL. Dates and JSON are written by the caller (toISOString, JSON.stringify). */
export type CopyField = string | number | null;

const SPECIAL = /[\\\n\r\t]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One value as COPY's text format writes it. */
export function copyField(value: CopyField): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`COPY field: ${value} is not a finite number`);
    return String(value);
  }
  // most values (ids, keys, URLs, ISO dates) hold none of the four: test once, replace only then
  return SPECIAL.test(value) ? value.replace(/[\\\n\r\t]/g, (c) => ESCAPES[c]!) : value;
}

/** Rows in COPY's text format, each line ended by a newline. */
export function copyText(rows: readonly (readonly CopyField[])[]): string {
  let out = '';
  for (const row of rows) out += row.map(copyField).join('\t') + '\n';
  return out;
}
