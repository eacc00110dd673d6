// The service worker replay registers at /sw.js: ReplayWeb.page's own (wabac.js, served at
// WABAC_SW_PATH and imported unchanged), with two things changed from outside it before it loads:
// - every document or worker it answers (the replayed pages, wabac's error pages, the app's
//   assets) carries replay's content policy, in place of wabac's;
// - a navigation to the app itself (the scope, with any query) is not answered by the worker but
//   left to the network, so the replay server checks its source every time (wabac would serve a
//   cached copy when the server is down) and its Clear-Site-Data header is not lost.
import { DOCUMENT_POLICY } from './policy.ts';

export const WABAC_SW_PATH = '/wabac-sw.js';

/** The query ReplayWeb.page 2.5.3 registers /sw.js with (Ruffle on, no embed), or none. */
const REGISTRATION_QUERIES = new Set(['', 'injectScripts=ruffle%2Fruffle.js&allowProxyPaths=ruffle%2F']);

/** Whether `/sw.js?<rawQuery>` is the worker ReplayWeb.page registers, not one set up by a page. */
export function isRegistrationQuery(rawQuery: string): boolean {
  return REGISTRATION_QUERIES.has(rawQuery);
}

// In a function: top-level names of this script would be shared with the imported one. The same
// script also runs as ReplayWeb.page's dedicated worker (it loads archives there), left as it is.
const script = `// capture-ledger replay: ReplayWeb.page's service worker with replay's content policy
(() => {
'use strict';
if (typeof ServiceWorkerGlobalScope === 'undefined' || !(self instanceof ServiceWorkerGlobalScope)) return;
const POLICY = ${JSON.stringify(DOCUMENT_POLICY)};
const POLICED = new Set(['document', 'iframe', 'frame', 'object', 'embed', 'worker', 'sharedworker']);
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function withPolicy(request, response) {
  if (!POLICED.has(request.destination) || response.type === 'error') return response;
  if (response.type !== 'basic' && response.type !== 'default' && response.type !== 'cors') {
    return new Response('refused by replay: an opaque answer for a page', { status: 502, headers: { 'content-security-policy': POLICY } });
  }
  const headers = new Headers(response.headers);
  headers.set('content-security-policy', POLICY);
  return new Response(NULL_BODY.has(response.status) ? null : response.body, { status: response.status, statusText: response.statusText, headers });
}

const respondWith = FetchEvent.prototype.respondWith;
FetchEvent.prototype.respondWith = function (answer) {
  const request = this.request;
  return respondWith.call(this, Promise.resolve(answer).then((response) => withPolicy(request, response)));
};

function isAppNavigation(request) {
  if (request.mode !== 'navigate') return false;
  const url = new URL(request.url);
  return url.origin + url.pathname === self.registration.scope;
}

const addEventListener = self.addEventListener.bind(self);
self.addEventListener = (type, listener, options) => {
  if (type !== 'fetch') return addEventListener(type, listener, options);
  return addEventListener('fetch', (event) => { if (isAppNavigation(event.request)) return; if (typeof listener === 'function') listener.call(self, event); else listener.handleEvent(event); }, options);
};
})();

importScripts(${JSON.stringify(WABAC_SW_PATH)});
`;

/** The text of /sw.js. */
export function serviceWorkerScript(): string {
  return script;
}
