// A level too large for one Temporal payload, through the real receiver, level workflow and
// Temporal: 20,000 pages of 120-character URLs are 2.5 MB of JSON, and Temporal refuses a payload
// over 2 MB (signal-with-start carries the input twice). The receiver sends the pages in parts
// (src/domain/dispatch-parts.ts) and the level puts them back together. No capture worker polls
// the capture queue here: the level is looked at, not captured, and terminated at the end.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchBody } from '../../src/domain/contract.ts';
import { DISPATCH_PART_BYTES } from '../../src/domain/dispatch-parts.ts';
import { LEVEL_WORKFLOW, levelWorkflowId, sliceWorkflowId } from '../../src/flow/names.ts';
import { startFlow, type Flow } from '../../src/flow/server.ts';
import { levelStateQuery, redispatchSignal, type LevelInput, type LevelState, type SliceInput } from '../../src/flow/workflows/messages.ts';
import { eventually } from '../support/crawls.ts';
import { testFlowOptions } from '../support/flow.ts';
import { flowAloneConfig } from '../support/flow-alone.ts';
import { dispatch } from '../support/flow-dispatch.ts';
import { dispatchTo } from '../support/report-receiver.ts';

const TOKEN = 'flow-large-dispatch-token';
const PAGES = 20_000;

let flow: Flow;
let connection: Connection;
let client: Client;
let flowQueue: string;
const levels: string[] = [];

beforeAll(async () => {
  const config = flowAloneConfig(TOKEN);
  const options = testFlowOptions(config);
  flowQueue = options.queues.flow;
  // the receiver and the flow worker only: nothing captures
  flow = await startFlow({ ...options, capture: undefined, port: 0, reportAuth: async () => ({}) });
  connection = await Connection.connect({ address: config.temporal.address });
  client = new Client({ connection, namespace: config.temporal.namespace });
});

afterAll(async () => {
  // its slices go with it (their parent closed)
  for (const id of levels)
    await client?.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
  await flow?.close();
  await connection?.close();
});

/** `n` pages of 120-character URLs on 20 hosts, the i-th page's URL naming i. */
function longPages(n: number): DispatchBody['pages'] {
  return Array.from({ length: n }, (_, i) => ({
    url: `https://h${String(i % 20).padStart(2, '0')}.large.test/en/stable/reference/${String(i).padStart(6, '0')}/${'s'.repeat(65)}.html`,
    follow: i % 2 === 0,
  }));
}

function largeDispatch(pages: DispatchBody['pages'], over: Partial<DispatchBody> = {}): DispatchBody {
  const body = dispatchTo('http://127.0.0.1:1', {
    pages,
    deadline: new Date(Date.now() + 3_600_000).toISOString(),
    capability: `cap-${randomUUID()}`,
    ...over,
  });
  levels.push(levelWorkflowId(body.crawlId, body.depth));
  return body;
}

/** The level's state once it holds `pages` pages and has started a slice. */
function levelHolding(body: DispatchBody, pages: number): Promise<LevelState> {
  const level = client.workflow.getHandle(levelWorkflowId(body.crawlId, body.depth));
  return eventually(
    async () => {
      const state = await level.query(levelStateQuery).catch(() => undefined);
      return state !== undefined && state.pages === pages && state.slices.length > 0 ? state : undefined;
    },
    60_000,
    `level ${body.crawlId} holding ${pages} pages`,
  );
}

/**
 * The pages a slice workflow was started with, as its first history event says. The level's state
 * names a slice as soon as its workflow task asks to start it, before Temporal has started it: the
 * history is asked for until there is one.
 */
async function sliceInput(levelId: string, slice: number): Promise<SliceInput> {
  const handle = client.workflow.getHandle(sliceWorkflowId(levelId, slice));
  const history = await eventually(
    () => handle.fetchHistory().catch((err: unknown) => (err instanceof Error && /NOT_FOUND/.test(err.message) ? undefined : Promise.reject(err))),
    30_000,
    `slice ${slice} of ${levelId} started`,
  );
  const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
  return client.options.loadedDataConverter.payloadConverter.fromPayload(started.input!.payloads![0]!);
}

describe('a level too large for one Temporal payload', () => {
  it('20,000 pages of 120-character URLs (2.5 MB): accepted, and the level holds every page, in the order dispatched', { timeout: 120_000 }, async () => {
    const pages = longPages(PAGES);
    expect(pages[0]!.url).toHaveLength(120);
    expect(Buffer.byteLength(JSON.stringify(pages))).toBeGreaterThan(2.5e6);
    const body = largeDispatch(pages);
    await dispatch(flow, TOKEN, body);
    const state = await levelHolding(body, PAGES);
    expect(state).toMatchObject({ phase: 'capturing', pages: PAGES, dispatch: { capability: body.capability, deadline: body.deadline } });
    // the first slice has its hosts' pages, each at its index in the dispatch
    const first = await sliceInput(levelWorkflowId(body.crawlId, 0), 0);
    expect(first.pages.length).toBe(1000);
    for (const p of first.pages) expect({ url: p.url, follow: p.follow }).toEqual(pages[p.index]);
    // the level's history holds no payload near Temporal's limit: the input carried one part
    const history = await client.workflow.getHandle(levelWorkflowId(body.crawlId, 0)).fetchHistory();
    const largest = Math.max(
      ...history
        .events!.flatMap((e) => [e.workflowExecutionStartedEventAttributes?.input, e.workflowExecutionSignaledEventAttributes?.input])
        .flatMap((i) => i?.payloads ?? [])
        .map((p) => p.data?.length ?? 0),
    );
    expect(largest).toBeLessThan(DISPATCH_PART_BYTES + 4096);
  });

  it(
    'a dispatch whose parts stopped coming (its receiver died) gives way to the next dispatch of the level, which is taken whole',
    { timeout: 120_000 },
    async () => {
      const pages = longPages(PAGES);
      const body = largeDispatch(pages);
      // what a receiver that died after signal-with-start left: the first part of three, and nothing more
      const input: LevelInput = {
        dispatch: { ...body, pages: pages.slice(0, 10) },
        knobs: {},
        captureQueue: 'nobody-polls',
        heartbeatIntervalMs: 60_000,
        receivedAt: Date.now(),
        parts: { id: 'lost', count: 3 },
      };
      const id = levelWorkflowId(body.crawlId, body.depth);
      await client.workflow.signalWithStart(LEVEL_WORKFLOW, {
        workflowId: id,
        taskQueue: flowQueue,
        args: [input],
        signal: redispatchSignal,
        signalArgs: [input],
      });
      const waiting = await client.workflow.getHandle(id).query(levelStateQuery);
      expect(waiting).toMatchObject({ phase: 'capturing', pages: 10, slices: [] });
      // the ledger, answered nothing, dispatches the level again, with a new capability
      const again = { ...body, capability: `cap-${randomUUID()}` };
      await dispatch(flow, TOKEN, again);
      const state = await levelHolding(again, PAGES);
      expect(state.dispatch.capability).toBe(again.capability);
      const first = await sliceInput(id, 0);
      for (const p of first.pages) expect({ url: p.url, follow: p.follow }).toEqual(pages[p.index]);
    },
  );

  it('a level terminated before it settled is failed, saying so, and the receiver does not wait on it to close', { timeout: 60_000 }, async () => {
    const body = largeDispatch(longPages(PAGES));
    await dispatch(flow, TOKEN, body);
    await levelHolding(body, PAGES);
    await client.workflow.getHandle(levelWorkflowId(body.crawlId, body.depth)).terminate('an operator ended it');
    const run = await flow.waitForLevel(body.crawlId, body.depth, 30_000);
    expect(run).toMatchObject({ state: 'failed', error: 'the level workflow was terminated before it settled' });
  });
});
