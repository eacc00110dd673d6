// The unprivileged user Chromium runs as when a capture process is root: Chromium's sandbox
// (user namespaces and seccomp) is off for root, so a root capture process drops Chromium to this
// user (src/flow/browser/chromium-as-capture-user.sh names it too). `npm start` and `npm test`
// create it; it owns nothing and cannot log in.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CAPTURE_USER = 'capture-ledger-capture';

/** The user's uid, or undefined when it does not exist. */
export function captureUserUid() {
  try {
    return Number(execFileSync('id', ['-u', CAPTURE_USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    return undefined;
  }
}

/** Creates the user when this process is root and it does not exist yet (otherwise nothing to do). */
export function ensureCaptureUser(log) {
  if (process.getuid?.() !== 0 || captureUserUid() !== undefined) return;
  const useradd = ['/usr/sbin/useradd', '/sbin/useradd'].find((p) => existsSync(p)) ?? 'useradd';
  execFileSync(useradd, ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', CAPTURE_USER], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  log(`created the system user ${CAPTURE_USER} (uid ${captureUserUid()}): Chromium runs as it when a capture process is root`);
}
