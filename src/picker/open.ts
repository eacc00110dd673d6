// One click from a row (or a search hit) to replay: the tab opens at once (inside the click, so
// no popup blocker), the API signs the archive (can_view, strongly consistent), and the tab goes
// to replay with that short-lived signed source, which the replay server proxies.
import { call, explain, setStatus } from './api.js';
import { replayLink } from './format.js';

export interface Openable {
  id: string;
  objectKey: string;
  url: string;
}

interface SignedUrl {
  url: string;
  expiresIn: number;
  /** the archives it requires, each signed after its own can_view */
  requires?: { objectKey: string; url: string }[];
  /** how many it requires could not be signed for this caller */
  withheld?: number;
}

let replayUrl = '';

export function setReplayUrl(u: string): void {
  replayUrl = u;
}

export async function openArchive(a: Openable): Promise<void> {
  const tab = window.open('', '_blank');
  if (tab) tab.opener = null;
  setStatus(`Opening ${a.url}…`);
  const r = await call<SignedUrl>(`/api/archives/${encodeURIComponent(a.id)}/url`, { method: 'POST' });
  if (!r.ok) {
    tab?.close();
    setStatus(`Could not open it. ${explain(r, 'the archive')}`, true);
    return;
  }
  const href = replayLink(replayUrl, a.objectKey, r.body.url, r.body.requires ?? []);
  if (tab) tab.location.href = href;
  else window.location.href = href;
  const withheld = r.body.withheld ?? 0;
  setStatus(
    `Opened in replay; the link is valid for ${r.body.expiresIn} s.${withheld > 0 ? ` ${withheld} archive(s) it requires could not be signed for you: what they hold is missing from the replay.` : ''}`,
  );
}
