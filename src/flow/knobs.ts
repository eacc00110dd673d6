// Test knobs: ways to make the reference capture flow misbehave on purpose, so the ledger's
// handling of each case can be tested end to end. Set them on startFlow({ knobs }), with PUT
// /knobs on a running flow, or per dispatch in the webhook URL's query string (which is how the
// dev process is steered through CAPTURE_LEDGER_CRAWL_WEBHOOK_URL):
//
//   http://127.0.0.1:7072/crawl?captureDelayMs=200&fail=/broken&deadlineMs=1000&slow=/slow:5000
//     &reportFailed=/lying&manifestError=/lost&dropReportDepth=2
//
// A URL pattern matches when the page URL contains it (plain substring).

export interface SlowRule {
  pattern: string;
  ms: number;
}

export interface FlowKnobs {
  /** extra ms every capture of a page that loads takes (the browser lingering on it), failed or not */
  captureDelayMs?: number;
  /** extra ms for the captures whose URL matches */
  slow?: SlowRule[];
  /** captures whose URL matches fail (manifest status failed, no artifacts) */
  fail?: string[];
  /** a capture taking longer than this is torn down: manifest failed with ERROR_TYPE_CANCELLED */
  deadlineMs?: number;
  /** the manifest says succeeded, the report says failed */
  reportFailed?: string[];
  /** the report carries manifestError instead of manifestKey (and no manifest is written) */
  manifestError?: string[];
  /** levels at these depths are never reported */
  dropReportDepths?: number[];
}

export const DEFAULT_DEADLINE_MS = 120_000;

export function matches(patterns: string[] | undefined, url: string): boolean {
  return (patterns ?? []).some((p) => p !== '' && url.includes(p));
}

export function extraDelayMs(knobs: FlowKnobs, url: string): number {
  let ms = knobs.captureDelayMs ?? 0;
  for (const s of knobs.slow ?? []) if (s.pattern !== '' && url.includes(s.pattern)) ms += s.ms;
  return ms;
}

export class KnobError extends Error {
  override name = 'KnobError';
}

function nonNegInt(name: string, v: unknown): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 0) throw new KnobError(`${name} must be a whole number ≥ 0, got ${JSON.stringify(v)}`);
  return n;
}

function strings(name: string, v: unknown): string[] {
  const list = Array.isArray(v) ? v : [v];
  return list.map((s) => {
    if (typeof s !== 'string') throw new KnobError(`${name} must be strings, got ${JSON.stringify(s)}`);
    return s;
  });
}

function slowRule(v: unknown): SlowRule {
  if (typeof v === 'string') {
    const i = v.lastIndexOf(':');
    if (i <= 0) throw new KnobError(`slow must be "pattern:ms", got ${JSON.stringify(v)}`);
    return { pattern: v.slice(0, i), ms: nonNegInt('slow ms', v.slice(i + 1)) };
  }
  if (typeof v === 'object' && v !== null && typeof (v as SlowRule).pattern === 'string')
    return { pattern: (v as SlowRule).pattern, ms: nonNegInt('slow ms', (v as SlowRule).ms) };
  throw new KnobError(`slow must be "pattern:ms" or {pattern, ms}, got ${JSON.stringify(v)}`);
}

const KEYS = ['captureDelayMs', 'slow', 'fail', 'deadlineMs', 'reportFailed', 'manifestError', 'dropReportDepths', 'dropReportDepth'] as const;

/** Checks knobs from JSON (PUT /knobs) or a query string (arrays by repeating the key). */
export function parseKnobs(input: Record<string, unknown>): FlowKnobs {
  const out: FlowKnobs = {};
  for (const [k, v] of Object.entries(input)) {
    if (v === undefined) continue;
    switch (k as (typeof KEYS)[number]) {
      case 'captureDelayMs':
        out.captureDelayMs = nonNegInt(k, v);
        break;
      case 'deadlineMs':
        out.deadlineMs = nonNegInt(k, v);
        if (out.deadlineMs === 0) throw new KnobError('deadlineMs must be ≥ 1');
        break;
      case 'slow':
        out.slow = (Array.isArray(v) ? v : [v]).map(slowRule);
        break;
      case 'fail':
      case 'reportFailed':
      case 'manifestError':
        out[k as 'fail'] = strings(k, v);
        break;
      case 'dropReportDepths':
      case 'dropReportDepth':
        out.dropReportDepths = [...(out.dropReportDepths ?? []), ...(Array.isArray(v) ? v : [v]).map((d) => nonNegInt(k, d))];
        break;
      default:
        throw new KnobError(`unknown knob ${JSON.stringify(k)}; known: ${KEYS.join(', ')}`);
    }
  }
  return out;
}

/** Per-dispatch knobs win over the process's, key by key. */
export function mergeKnobs(base: FlowKnobs, over: FlowKnobs): FlowKnobs {
  return { ...base, ...Object.fromEntries(Object.entries(over).filter(([, v]) => v !== undefined)) };
}
