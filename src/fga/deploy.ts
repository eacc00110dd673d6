// fga:deploy: makes sure the store exists and holds fga/model.fga, and returns the two ids every
// client pins. Models are immutable and every write mints a new id, so an unchanged model is not
// written again: the newest model in the store is reused when it says the same as the file.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OpenFgaClient } from '@openfga/sdk';
import { transformer } from '@openfga/syntax-transformer';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MODEL_FILE = ROOT + 'fga/model.fga';
export const STORE_NAME = 'capture-ledger';
export const ENV_LOCAL = ROOT + '.env.local';

type ModelJson = Parameters<OpenFgaClient['writeAuthorizationModel']>[0];

export function modelFromDsl(dsl: string): ModelJson {
  return transformer.transformDSLToJSONObject(dsl) as unknown as ModelJson;
}

/**
 * Key order sorted, and the defaults the server fills in ("", null, []) dropped: the server
 * returns relations in its own order and with empty fields the transformer leaves out.
 */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) continue;
      out[key] = canonical(v);
    }
    return out;
  }
  return value;
}

/** Two models are the same when they say the same thing: comments, layout and order do not count. */
export function sameModel(a: ModelJson, b: ModelJson): boolean {
  const norm = (m: ModelJson): string =>
    JSON.stringify(canonical({ schema_version: m.schema_version, type_definitions: m.type_definitions, conditions: m.conditions ?? {} }));
  return norm(a) === norm(b);
}

export interface DeployResult {
  storeId: string;
  modelId: string;
  createdStore: boolean;
  createdModel: boolean;
}

async function findStore(admin: OpenFgaClient, name: string): Promise<string | undefined> {
  const matches: { id: string; created_at: string }[] = [];
  let continuationToken: string | undefined;
  do {
    const page = await admin.listStores({ pageSize: 100, continuationToken });
    for (const s of page.stores ?? []) if (s.name === name) matches.push({ id: s.id, created_at: s.created_at });
    continuationToken = page.continuation_token || undefined;
  } while (continuationToken);
  // Several stores with one name (made by hand): the oldest is the stable choice.
  matches.sort((x, y) => x.created_at.localeCompare(y.created_at));
  return matches[0]?.id;
}

export async function deployModel(opts: { apiUrl: string; storeName?: string; modelDsl?: string }): Promise<DeployResult> {
  const storeName = opts.storeName ?? STORE_NAME;
  const model = modelFromDsl(opts.modelDsl ?? readFileSync(MODEL_FILE, 'utf8'));
  const admin = new OpenFgaClient({ apiUrl: opts.apiUrl });

  let storeId = await findStore(admin, storeName);
  const createdStore = storeId === undefined;
  if (storeId === undefined) storeId = (await admin.createStore({ name: storeName })).id;

  const scoped = new OpenFgaClient({ apiUrl: opts.apiUrl, storeId });
  const latest = (await scoped.readLatestAuthorizationModel()).authorization_model;
  if (latest?.id && sameModel(latest as unknown as ModelJson, model)) {
    return { storeId, modelId: latest.id, createdStore, createdModel: false };
  }
  const { authorization_model_id: modelId } = await scoped.writeAuthorizationModel(model);
  return { storeId, modelId, createdStore, createdModel: true };
}

/**
 * Sets the variables in an env file, keeping every other line as it was (created if missing).
 * A variable set more than once keeps one line, at its first place.
 */
export function writeEnvFile(path: string, values: Record<string, string>): void {
  const lines = existsSync(path) ? readFileSync(path, 'utf8').split(/\r?\n/) : [];
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const done = new Set<string>();
  const out: string[] = [];
  for (const line of lines) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line);
    const name = m?.[1];
    if (name !== undefined && name in values) {
      if (!done.has(name)) out.push(`${name}=${values[name]}`);
      done.add(name);
    } else {
      out.push(line);
    }
  }
  for (const [name, value] of Object.entries(values)) if (!done.has(name)) out.push(`${name}=${value}`);
  writeFileSync(path, out.join('\n') + '\n');
}
