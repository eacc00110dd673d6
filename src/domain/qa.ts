// Quality assurance of one capture, scored as it is captured: the page is replayed in the same
// browser from nothing but what was recorded, and the replay is compared with the live page it was
// recorded from. A capture that replays as it looked, says what it said and asks for nothing it
// did not record is good; anything else needs review, and is captured once more (with longer to
// settle) before it is kept. Both attempts are in the manifest, so a person sees why.
import Type, { type Static } from 'typebox';

/** At least this share of the viewport's pixels equal (per channel within PIXEL_TOLERANCE). */
export const QA_MIN_PIXELS = 0.98;
/** At least this overlap of the visible text's words (Dice, counting repeats). */
export const QA_MIN_TEXT = 0.98;
/** Channels this close count as equal: antialiasing, not content. */
export const QA_PIXEL_TOLERANCE = 16;
/** A capture that needs review is captured once more, lingering on the page at least this long. */
export const QA_RETRY_LINGER_MS = 3_000;

export const QaAttemptSchema = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, maximum: 2 }),
    verdict: Type.Union([Type.Literal('good'), Type.Literal('review')]),
    /** share of viewport pixels equal between the live page and its replay */
    pixels: Type.Number({ minimum: 0, maximum: 1 }),
    /** word overlap of the live page's text and the replay's */
    text: Type.Number({ minimum: 0, maximum: 1 }),
    /** requests the replay made that the capture had not recorded, a few named */
    misses: Type.Integer({ minimum: 0 }),
    missed: Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 10 }),
  },
  { additionalProperties: false },
);
export type QaAttempt = Static<typeof QaAttemptSchema>;

export interface QaScore {
  pixels: number;
  text: number;
  misses: number;
  missed: string[];
}

const words = (s: string): string[] =>
  s
    .toLowerCase()
    .split(/\s+/u)
    .filter((w) => w !== '');

/** Dice coefficient of the two texts' words, repeats counted: 1 for the same words, 0 for none shared. */
export function textSimilarity(a: string, b: string): number {
  const wa = words(a);
  const wb = words(b);
  if (wa.length === 0 && wb.length === 0) return 1;
  const counts = new Map<string, number>();
  for (const w of wa) counts.set(w, (counts.get(w) ?? 0) + 1);
  let shared = 0;
  for (const w of wb) {
    const n = counts.get(w) ?? 0;
    if (n > 0) {
      shared++;
      counts.set(w, n - 1);
    }
  }
  return (2 * shared) / (wa.length + wb.length);
}

export function qaVerdict(s: QaScore): QaAttempt['verdict'] {
  return s.pixels >= QA_MIN_PIXELS && s.text >= QA_MIN_TEXT && s.misses === 0 ? 'good' : 'review';
}

/** Whether another attempt is worth making: the first needed review. */
export function shouldRecapture(attempts: readonly QaAttempt[]): boolean {
  return attempts.length === 1 && attempts[0]!.verdict === 'review';
}
