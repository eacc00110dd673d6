/**
 * provenance.documentWithheld as admission stored it. Any non-empty string is kept, including a
 * reason newer than this code knows: dropping it would make a withheld body look like an empty one.
 */
export function withheldFromProvenance(provenance: Record<string, unknown> | null | undefined): string | undefined {
  const v = provenance?.documentWithheld;
  return typeof v === 'string' && v !== '' ? v : undefined;
}
