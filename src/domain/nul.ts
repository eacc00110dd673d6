// U+0000 is valid JSON (written \u0000) and a valid JavaScript string, but Postgres text and jsonb
// cannot hold it: a request body or a manifest carrying one would fail at its first write, as a
// 500 or as a level that can never be stored. Both are refused where they are parsed instead.

interface Visit {
  value: unknown;
  key: string | number;
  parent: Visit | undefined;
}

/**
 * The path (keys and indexes) of the first string or key in `value`, in document order, holding
 * U+0000, or undefined. Walked without recursion: a body may nest as deep as its size allows.
 */
export function nulPath(value: unknown): (string | number)[] | undefined {
  const stack: Visit[] = [{ value, key: '', parent: undefined }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const v = visit.value;
    if ((typeof visit.key === 'string' && visit.key.includes('\u0000')) || (typeof v === 'string' && v.includes('\u0000'))) return pathOf(visit);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: visit });
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], key: entries[i]![0], parent: visit });
    }
  }
  return undefined;
}

/**
 * nulPath of a value JSON.parse made of `text`. JSON can only carry U+0000 as the escape \u0000
 * (a raw one is not JSON), so a text without that escape, nearly every one, is not walked.
 */
export function nulPathInJson(text: string, parsed: unknown): (string | number)[] | undefined {
  return text.includes('\\u0000') ? nulPath(parsed) : undefined;
}

function pathOf(visit: Visit): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.parent !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}
