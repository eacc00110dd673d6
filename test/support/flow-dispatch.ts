// A level dispatched to a capture flow through its webhook, as the ledger dispatches one: the tests
// and the benches both do it, so it takes nothing from vitest.
import type { DispatchBody } from '../../src/domain/contract.ts';
import type { LevelRun } from '../../src/flow/level-runs.ts';
import type { Flow } from '../../src/flow/server.ts';

/** POSTs `body` to the flow's webhook (with `query`) bearing `token`; any answer but 202 is thrown with its status and body. */
export async function dispatch(flow: Flow, token: string, body: DispatchBody, query = ''): Promise<void> {
  const res = await fetch(`${flow.webhookUrl}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  if (res.status !== 202) throw new Error(`dispatch answered ${res.status}: ${await res.text()}`);
}

/** dispatch(), then the level once it settles. */
export async function dispatchLevel(flow: Flow, token: string, body: DispatchBody, timeoutMs: number, query = ''): Promise<LevelRun> {
  await dispatch(flow, token, body, query);
  return flow.waitForLevel(body.crawlId, body.depth, timeoutMs);
}
