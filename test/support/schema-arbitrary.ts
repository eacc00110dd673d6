// fast-check values from the JSON schemas of an OpenAPI document: `fitting` keeps to the schema
// (sizes kept small), `anyValue` mostly fits and sometimes breaks one thing (a wrong type, one past
// a bound, a missing or unknown key), at any depth. Covers the keywords the API's schemas use.
// Hints name what a property's strings mean where the schema cannot (`seeds` are URLs), so that
// fitting values also reach what lies past validation.
import fc from 'fast-check';

/** property name → what a fitting string (or array item) of it is */
export type Hints = Record<string, fc.Arbitrary<string>>;

export interface JsonSchema {
  type?: string | string[];
  nullable?: boolean;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  minProperties?: number;
  maxProperties?: number;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
}

/** what a generated array or string is at most, whatever the schema allows */
const SMALL = 4;

const typesOf = (s: JsonSchema): string[] => [s.type ?? []].flat().concat(s.nullable ? ['null'] : []);

function fittingString(s: JsonSchema): fc.Arbitrary<string> {
  if (s.format === 'uuid') return fc.uuid();
  if (s.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  if (s.format === 'uri') return fc.webUrl();
  const min = s.minLength ?? 0;
  if (s.pattern !== undefined) return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= min && v.length <= (s.maxLength ?? Infinity));
  return fc.string({ minLength: min, maxLength: Math.min(s.maxLength ?? 30, min + 30) });
}

function fittingNumber(s: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = s.minimum ?? -1e6;
  const max = s.maximum ?? 1e6;
  return integer ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true });
}

function fittingObject(s: JsonSchema, hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const props = s.properties ?? {};
  const required = new Set(s.required ?? []);
  // an object of one key from a fixed list (a rule: {"follow": "same-site"})
  if (s.maxProperties === 1 && Object.keys(props).length > 0) {
    return fc.constantFrom(...Object.keys(props)).chain((k) => fittingNamed(k, props[k]!, hints).map((v) => ({ [k]: v })));
  }
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, p] of Object.entries(props)) record[k] = fittingNamed(k, p, hints);
  return fc.record(record, { requiredKeys: [...required].filter((k) => k in props) }) as fc.Arbitrary<Record<string, unknown>>;
}

/** A fitting value of the property `name`: its hint (an array's items too) when there is one. */
export function fittingNamed(name: string, s: JsonSchema, hints: Hints): fc.Arbitrary<unknown> {
  const hint = hints[name];
  if (hint === undefined) return fitting(s, hints);
  if (typesOf(s).includes('array'))
    return fc.array(hint, { minLength: Math.max(1, s.minItems ?? 0), maxLength: Math.max(1, Math.min(s.maxItems ?? SMALL, SMALL)) });
  return hint;
}

/** A value the schema accepts (for oneOf/anyOf: one branch's). */
export function fitting(s: JsonSchema, hints: Hints = {}): fc.Arbitrary<unknown> {
  if (s.enum !== undefined) return fc.constantFrom(...s.enum);
  const branches = s.oneOf ?? s.anyOf;
  if (branches !== undefined && s.type === undefined) return fc.oneof(...branches.map((b) => fitting(b, hints)));
  const arbs = typesOf(s).map((t): fc.Arbitrary<unknown> => {
    switch (t) {
      case 'string':
        return fittingString(s);
      case 'integer':
        return fittingNumber(s, true);
      case 'number':
        return fittingNumber(s, false);
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return fc.array(fitting(s.items ?? {}, hints), {
          minLength: s.minItems ?? 0,
          maxLength: Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? SMALL, SMALL)),
        });
      case 'object':
        return fittingObject(s, hints);
      default:
        return fc.jsonValue();
    }
  });
  return arbs.length === 0 ? fc.jsonValue() : fc.oneof(...arbs);
}

/** One thing wrong with a value of this schema: another type, one past a bound, a missing or unknown key. */
export function breaking(s: JsonSchema, hints: Hints = {}): fc.Arbitrary<unknown> {
  const types = typesOf(s);
  const wrongs: fc.Arbitrary<unknown>[] = [fc.jsonValue().filter((v) => !types.includes(jsonType(v)))];
  if (s.maxLength !== undefined && s.maxLength < 10_000) wrongs.push(fc.constant('x'.repeat(s.maxLength + 1)));
  if (s.minLength !== undefined && s.minLength > 0) wrongs.push(fc.constant(''));
  if (s.maximum !== undefined) wrongs.push(fc.constant(s.maximum + 1));
  if (s.minimum !== undefined) wrongs.push(fc.constant(s.minimum - 1), fc.constant(s.minimum + 0.5));
  if (s.enum !== undefined) wrongs.push(fc.string({ maxLength: 10 }).filter((v) => !s.enum!.includes(v)));
  if (s.maxItems !== undefined && s.maxItems < 200 && s.items !== undefined)
    wrongs.push(fc.array(fitting(s.items, hints), { minLength: s.maxItems + 1, maxLength: s.maxItems + 1 }));
  if (s.minItems !== undefined && s.minItems > 0) wrongs.push(fc.constant([]));
  if (types.includes('object')) {
    wrongs.push(fittingObject(s, hints).map((o) => ({ ...o, ['unknown-key']: 1 })));
    const required = s.required ?? [];
    if (required.length > 0)
      wrongs.push(
        fc.tuple(fittingObject(s, hints), fc.constantFrom(...required)).map(([o, k]) => Object.fromEntries(Object.entries(o).filter(([key]) => key !== k))),
      );
  }
  return fc.oneof(...wrongs);
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Mostly a fitting value (its hint, for a property `name` that has one), sometimes broken, here or somewhere inside. */
export function anyValue(s: JsonSchema, hints: Hints = {}, name?: string, depth = 0): fc.Arbitrary<unknown> {
  const fits = name === undefined ? fitting(s, hints) : fittingNamed(name, s, hints);
  const inner = depth < 3 && typesOf(s).includes('object') && s.properties !== undefined && s.maxProperties !== 1 ? [withInnerBreak(s, hints, depth)] : [];
  const arrayInner =
    depth < 3 && typesOf(s).includes('array') && s.items !== undefined
      ? [fc.array(anyValue(s.items, hints, undefined, depth + 1), { minLength: 1, maxLength: 3 })]
      : [];
  return fc.oneof(
    { weight: 4, arbitrary: fits },
    { weight: 2, arbitrary: breaking(s, hints) },
    ...[...inner, ...arrayInner].map((arbitrary) => ({ weight: 2, arbitrary })),
  );
}

function withInnerBreak(s: JsonSchema, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  const keys = Object.keys(s.properties!);
  return fc
    .tuple(fittingObject(s, hints), fc.constantFrom(...keys))
    .chain(([o, k]) => anyValue(s.properties![k]!, hints, k, depth + 1).map((v) => ({ ...o, [k]: v })));
}
