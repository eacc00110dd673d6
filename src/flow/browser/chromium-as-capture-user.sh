#!/bin/sh
# Debian's chromium for a capture process that runs as root (launch.ts points Playwright here).
# Chromium's sandbox is off for root, so Chromium runs as the capture user instead
# (scripts/lib/capture-user.mjs; `npm start` and `npm test` create it), with the sandbox on.
# setpriv changes user and execs in place: Playwright's pipe (fds 3 and 4,
# --remote-debugging-pipe) stays open and Chromium stays Playwright's child. The environment is
# the one launch.ts gives Chromium (none of the capture process's settings), with HOME the fresh
# profile directory Playwright made for this launch, handed to the user.
set -eu
user=capture-ledger-capture
if ! id -u "$user" >/dev/null 2>&1; then
  echo "$0: the user $user does not exist; npm start and npm test create it (useradd --system)" >&2
  exit 70
fi
profile=
for arg in "$@"; do
  case "$arg" in --user-data-dir=*) profile=${arg#--user-data-dir=} ;; esac
done
if [ -z "$profile" ] || [ ! -d "$profile" ]; then
  echo "$0: no --user-data-dir directory among the arguments (Playwright passes one)" >&2
  exit 64
fi
chown -R "$user:" "$profile"
exec /usr/bin/setpriv --reuid="$user" --regid="$user" --init-groups -- /usr/bin/env HOME="$profile" /usr/bin/chromium "$@"
