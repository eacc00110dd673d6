// harness: not used because it tests the capture browser's refusing proxy (src/flow/browser) alone, over loopback sockets, with no ledger.
// The proxy Chromium is pointed at refuses every tunnel with 403. A peer that then resets the
// connection — Chromium closing with a refused tunnel open — must cost the proxy its socket, not
// its process: in a test run of the flow that reset came as an uncaught `read ECONNRESET`. The
// proxy runs in a process of its own here, so an uncaught error shows as that process's exit.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const LAUNCH = new URL('../../src/flow/browser/launch.ts', import.meta.url).pathname;

/** Opens a tunnel through the proxy, reads its answer, resets the connection, and waits until the proxy holds no connection. */
const RESET_A_REFUSED_TUNNEL = [
  "import { once } from 'node:events';",
  "import { connect } from 'node:net';",
  `import { startRefusingProxy } from ${JSON.stringify(LAUNCH)};`,
  'const refusals = [];',
  'const proxy = await startRefusingProxy((what) => refusals.push(what));',
  "const peer = connect(proxy.port, '127.0.0.1').on('error', () => {});",
  "await once(peer, 'connect');",
  "peer.write('CONNECT tracker.example:443 HTTP/1.1\\r\\nHost: tracker.example:443\\r\\n\\r\\n');",
  "const [answer] = await once(peer, 'data');",
  'peer.resetAndDestroy();',
  'const deadline = Date.now() + 10_000;',
  'while (proxy.open > 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));',
  "console.log(JSON.stringify({ answer: String(answer).split('\\r\\n')[0], refusals, refused: proxy.refused, open: proxy.open }));",
  'await proxy.close();',
].join('\n');

describe("the capture browser's refusing proxy", () => {
  it('a tunnel it refused and its peer then reset is closed, and the proxy goes on', async () => {
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', RESET_A_REFUSED_TUNNEL]);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toEqual({
      answer: 'HTTP/1.1 403 Forbidden',
      refusals: ['CONNECT tracker.example:443'],
      refused: 1,
      open: 0,
    });
  });
});
