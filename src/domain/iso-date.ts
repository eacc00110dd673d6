// Timestamps as the ledger stores them: an instant in years 1–9999, as toISOString writes it.
// Date.parse is slow (several µs) and admission reads four timestamps a page, nearly all of them
// already in that form: one is recognised by its fields instead.

/** Years 1–9999: JavaScript dates reach ±275,760, which neither Postgres nor a reader of the ledger makes sense of. */
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/** `s` as toISOString writes the instant it names, or undefined when it names none in years 1–9999. */
export function validDate(s: string | undefined): string | undefined {
  if (s === undefined) return undefined;
  if (isCanonical(s)) return s;
  const t = Date.parse(s);
  return Number.isNaN(t) || t < EARLIEST || t > LATEST ? undefined : new Date(t).toISOString();
}

const CANONICAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** YYYY-MM-DDTHH:mm:ss.sssZ naming a real date and time of years 1000–9999: what toISOString gives back for it. */
function isCanonical(s: string): boolean {
  if (s.length !== 24 || !CANONICAL.test(s)) return false;
  const n = (at: number, len: number): number => Number(s.slice(at, at + len));
  const year = n(0, 4);
  const month = n(5, 2);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  return year >= 1000 && days !== undefined && n(8, 2) >= 1 && n(8, 2) <= days && n(11, 2) <= 23 && n(14, 2) <= 59 && n(17, 2) <= 59;
}
