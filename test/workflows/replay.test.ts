// Determinism guard: every history in test/workflows/histories/ (the History message as protobufjs
// writes it to JSON, recorded from real runs of the crawl workflow: `CAPTURE_LEDGER_RECORD_HISTORIES=1 npx vitest run --project workflows
// test/workflows/crawl-liveness.test.ts`) must replay against today's crawl workflow (src/workflows/crawl.ts, crawl-run.ts). A
// change that would break the crawls running while a new worker is deployed fails here with
// the event it disagrees about; record again only when that break is intended and handled.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { quietRuntime } from '../support/quiet-runtime.ts';
import { workflowBundle } from './support.ts';

const DIR = fileURLToPath(new URL('./histories/', import.meta.url));
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

type HistoryJson = { events: { eventType: string; activityTaskScheduledEventAttributes?: { activityType: { name: string } } }[] };
const load = (f: string): HistoryJson => JSON.parse(readFileSync(DIR + f, 'utf8')) as HistoryJson;

async function replay(histories: { workflowId: string; history: HistoryJson }[]): Promise<{ workflowId: string; error?: string }[]> {
  quietRuntime();
  const outcomes: { workflowId: string; error?: string }[] = [];
  const input = histories.map((h) => ({ workflowId: h.workflowId, history: temporal.api.history.v1.History.fromObject(h.history) }));
  for await (const r of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, input)) {
    outcomes.push({ workflowId: r.workflowId, ...(r.error ? { error: `${r.error.name}: ${r.error.message}` } : {}) });
  }
  return outcomes;
}

describe('recorded crawl histories replay on the current workflow code', () => {
  it('has histories to replay: no liveness case left unrecorded', () => {
    expect(files.length).toBeGreaterThanOrEqual(9);
  });

  it('replays every one of them without a nondeterminism error', async () => {
    const histories = files.map((f) => ({ workflowId: f.replace(/\.json$/, ''), history: load(f) }));
    expect(await replay(histories)).toEqual(histories.map((h) => ({ workflowId: h.workflowId })));
  });

  it('catches a history the code disagrees with (here: its first activity renamed)', async () => {
    const history = load('no-heartbeat-timeout.json');
    const scheduled = history.events.find((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')!;
    scheduled.activityTaskScheduledEventAttributes!.activityType.name = 'beginCrawlV0';
    const [outcome] = await replay([{ workflowId: 'tampered', history }]);
    expect(outcome?.error).toMatch(/DeterminismViolationError|[Nn]ondetermin/);
  });
});
