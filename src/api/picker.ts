// The picker at `/`: static files from src/picker/ (index.html, picker.css) and its browser
// modules, each src/picker/<name>.ts served as /picker/<name>.js with its types stripped once at
// startup by Node's own stripper (node:module stripTypeScriptTypes: the same erasable-only
// TypeScript the API runs as, so no build step and no dependency that production lacks; "strip"
// mode keeps every line and column where it was, so the browser's errors point into the source).
// The browser cannot tell "no name given" from "this API wants a JWT" (both are 401), so
// /picker/config.json says which identity mode the API runs in; the page asks for names, a token
// or nothing accordingly, and then calls only the public API.
import { readdirSync, readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { IdentityMode } from './identity.ts';

export { replayLink } from '../picker/format.ts';

export const PICKER_DIR = fileURLToPath(new URL('../picker/', import.meta.url));
/** how often the Crawls view refreshes a running crawl (default) */
export const PICKER_POLL_MS = 2000;
const STATIC_FILES = /^\/?(index\.html|picker\.css)$/;

export interface PickerOptions {
  mode: IdentityMode;
  replayUrl: string;
  /** where signed thumbnail URLs point (the S3 endpoint): the one image origin the page may load */
  imageOrigin: string;
  /** how often the Crawls view refreshes a running crawl's progress (default PICKER_POLL_MS) */
  pollMs?: number;
}

/** `<name>.js` → the browser module compiled from src/picker/<name>.ts (tests and .d.ts left out). */
export function compilePickerModules(dir = PICKER_DIR): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file.endsWith('.d.ts')) continue;
    out.set(file.replace(/\.ts$/, '.js'), stripTypeScriptTypes(readFileSync(`${dir}${file}`, 'utf8'), { mode: 'strip' }));
  }
  return out;
}

export function pickerCsp(imageOrigin: string): string {
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src ${new URL(imageOrigin).origin}; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'`;
}

export async function pickerRoutes(app: FastifyInstance, opts: PickerOptions): Promise<void> {
  const csp = pickerCsp(opts.imageOrigin);
  const modules = compilePickerModules();
  const config = JSON.stringify({ mode: opts.mode, replayUrl: opts.replayUrl, pollMs: Math.max(100, Math.floor(opts.pollMs ?? PICKER_POLL_MS)) });
  const hidden = { hide: true } as const;

  await app.register(fastifyStatic, {
    root: PICKER_DIR,
    prefix: '/picker/',
    wildcard: false,
    index: false,
    allowedPath: (path) => STATIC_FILES.test(path),
    setHeaders: (res) => {
      res.setHeader('cache-control', 'no-store');
      res.setHeader('content-security-policy', csp);
      res.setHeader('x-content-type-options', 'nosniff');
    },
  });
  app.get(
    '/',
    { config: { public: true }, schema: { ...hidden, querystring: { type: 'object', properties: {}, additionalProperties: false } } },
    async (_request, reply) => reply.sendFile('index.html'),
  );
  app.get('/picker/config.json', { config: { public: true }, schema: hidden }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').header('cache-control', 'no-store').send(config),
  );
  for (const [name, code] of modules) {
    app.get(`/picker/${name}`, { config: { public: true }, schema: hidden }, async (_request, reply) =>
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').send(code),
    );
  }
}
