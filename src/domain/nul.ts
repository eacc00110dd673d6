// U+0000 is valid JSON (written \u0000) and a valid JavaScript string, but Postgres text and jsonb
// cannot hold it: a request carrying one would fail at the first write, as a 500 or, for a level
// report, as a level that can never be stored. Such a body is refused where it is parsed instead.

/** The path (keys and indexes) of the first string or key in `value` holding U+0000, or undefined. */
export function nulPath(value: unknown): (string | number)[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? [] : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner = nulPath(value[i]);
      if (inner !== undefined) return [i, ...inner];
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\u0000')) return [k];
    const inner = nulPath(v);
    if (inner !== undefined) return [k, ...inner];
  }
  return undefined;
}
