// The content policy of everything replay serves, the pages wabac's service worker answers
// included (service-worker.ts puts it on them). A replayed page is hostile content that runs on
// the replay origin, so the policy, not wabac's URL rewriting, decides where it can reach:
// - connect-src, img-src… ('self' through default-src): fetch, XHR, WebSocket, EventSource, beacon,
//   images, fonts, media reach the replay origin and data:/blob: only (wabac's own policy lets any
//   ws:/wss: host through);
// - sandbox without allow-forms: no form is sent at all, not even to the replay origin. A refused
//   form-action still lets Chromium's network predictor open a connection to the form's host as
//   the navigation starts, before the policy refuses it; a form that never submits opens none.
//   The app's own forms work without it (app-forms.ts); form-action 'self' stays as a second wall;
// - sandbox without allow-popups: no window.open, no target=_blank (a page's frames inherit it,
//   and the app's own page carries it too, so a replayed frame cannot open one through its parent);
//   without allow-top-navigation*: a replayed frame cannot navigate the tab away;
// - frame-src 'self' data: blob: (default-src): a frame cannot navigate itself to another host.

/** What a replayed page keeps: scripts, dialogs, downloads. */
const SANDBOX = ['allow-scripts', 'allow-same-origin', 'allow-modals', 'allow-downloads', 'allow-pointer-lock'];

const FETCH_POLICY = [
  "default-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob:",
  "form-action 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'self'",
];

/** For documents: the app's page, replayed pages, and every answer that could be shown as one. */
export const DOCUMENT_POLICY = [...FETCH_POLICY, `sandbox ${SANDBOX.join(' ')}`].join('; ');

/** For the service worker's script (a worker ignores sandbox and frame-ancestors, and says so). */
export const WORKER_POLICY = FETCH_POLICY.filter((d) => !d.startsWith('frame-ancestors')).join('; ');
