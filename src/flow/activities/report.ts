// The flow worker's activities toward the ledger: the level report and the heartbeats. The report
// is built here from the slices' results (read from Temporal, so no history holds the whole
// report) and POSTed with the reporter's token and the dispatch's capability. Network errors,
// 429 and 5xx throw and Temporal tries again until the level's deadline; any other answer is
// final — a 401 or 403 is refused for good, and says so loudly.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { CAPABILITY_HEADER, type HeartbeatBody, type HostReport, type LevelReportBody, type PageReport } from '../../domain/contract.ts';
import { withinLimits } from '../level.ts';
import { DEDUP_LIMITS, PayloadIndex, type StoredPayload } from '../../domain/wacz/dedup.ts';
import { levelWorkflowId, REPORT_FINAL } from '../names.ts';
import { refusalLine, refused, type ReportAuth } from '../report.ts';
import { manifestKeyOf, pageTaskId } from '../resume.ts';
import { levelStateQuery, sliceProgressQuery, type PageOutcome, type ReportAttempt, type ReportOutcome, type SliceResult } from '../workflows/messages.ts';
import type { FlowActivities, LevelTarget, SendReportInput } from './types.ts';

export interface FlowActivityDeps {
  auth: ReportAuth;
  log: (line: string) => void;
  /** whoever runs the flow must see a refusal even with no log sink configured */
  loud?: (line: string) => void;
}

const retryable = (status: number): boolean => status === 429 || status >= 500;

function pageReport(t: LevelTarget, p: PageOutcome): PageReport {
  const iso = (ms: number | undefined): { submittedAt?: string } => (ms === undefined ? {} : { submittedAt: new Date(ms).toISOString() });
  if (p.status === 'skipped') return { url: p.url, status: 'skipped', skipReason: 'robots' };
  if (p.submittedAt === undefined) return { url: p.url, status: 'failed', ...(p.manifestError !== undefined ? { manifestError: p.manifestError } : {}) };
  const taskId = pageTaskId(t.crawlId, t.depth, p.url);
  return withinLimits({
    url: p.url,
    status: p.status,
    taskId,
    ...(p.manifest ? { manifestKey: manifestKeyOf(t.prefix, taskId) } : {}),
    ...(p.manifest && p.manifestVersion !== undefined ? { manifestVersionId: p.manifestVersion } : {}),
    ...(p.manifestError !== undefined ? { manifestError: p.manifestError } : {}),
    ...(p.finalUrl !== undefined ? { finalUrl: p.finalUrl } : {}),
    ...iso(p.submittedAt),
    ...(p.finishedAt !== undefined ? { finishedAt: new Date(p.finishedAt).toISOString() } : {}),
  });
}

const sliceResults = (client: Client, slices: readonly string[]): Promise<SliceResult[]> =>
  Promise.all(slices.map((id) => client.workflow.getHandle(id).result() as Promise<SliceResult>));

/** The level report from the slices' results. */
export async function buildLevelReport(client: Client, t: LevelTarget, slices: readonly string[]): Promise<LevelReportBody> {
  const results = await sliceResults(client, slices);
  // slices in order (an earlier run's first), pages in dispatch order within each; a page
  // captured again by a later slice is reported as that slice settled it
  const byUrl = new Map<string, PageOutcome>();
  for (const r of results) for (const p of [...r.pages].sort((a, b) => a.index - b.index)) byUrl.set(p.url, p);
  const pages = [...byUrl.values()];
  const hosts = new Map<string, HostReport>();
  for (const h of results.flatMap((r) => r.hosts)) {
    if (h.lastFinishedAt === undefined) continue;
    const at = new Date(h.lastFinishedAt).toISOString();
    const known = hosts.get(h.host);
    if (known === undefined || (known.lastFinishedAt ?? '') < at) hosts.set(h.host, { host: h.host, delayMs: h.delayMs, lastFinishedAt: at });
  }
  return { depth: t.depth, pages: pages.map((p) => pageReport(t, p)), ...(hosts.size > 0 ? { hosts: [...hosts.values()] } : {}) };
}

async function post(url: string, t: LevelTarget, auth: ReportAuth, body: unknown, timeoutMs: number): Promise<Response> {
  const headers = await auth(t.orgId);
  const bound: Record<string, string> = t.capability === undefined ? {} : { [CAPABILITY_HEADER]: t.capability };
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers, ...bound },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
}

async function sendReport(deps: FlowActivityDeps, input: SendReportInput): Promise<ReportOutcome> {
  const ctx = Context.current();
  // earlier attempts of this activity left what they saw in their heartbeat details
  const attempts: ReportAttempt[] = [...((ctx.info.heartbeatDetails as ReportAttempt[] | undefined) ?? [])];
  const attempt: ReportAttempt = { at: new Date().toISOString() };
  attempts.push(attempt);
  const level = `level ${input.crawlId}/${input.depth}`;
  try {
    const body = await buildLevelReport(ctx.client, input, input.slices);
    const res = await post(input.reportUrl, input, deps.auth, body, 30_000);
    attempt.status = res.status;
    attempt.body = (await res.text()).slice(0, 2000);
  } catch (err) {
    attempt.error = (err as Error).message;
  }
  ctx.heartbeat(attempts);
  const status = attempt.status;
  if (status !== undefined && status < 300) {
    deps.log(`${level}: report reported (${status}, ${attempts.length} attempt(s))`);
    return { delivered: true, status, attempts };
  }
  if (status === undefined || retryable(status)) {
    if (ctx.info.attempt === 1 || attempts.length % 5 === 0)
      deps.log(`${level}: report not delivered yet (${status ?? attempt.error}); trying again until the level's deadline`);
    const outcome: ReportOutcome = { delivered: false, ...(status !== undefined ? { status } : {}), attempts };
    throw ApplicationFailure.create({ type: 'ReportNotDelivered', message: `${level}: the ledger answered ${status ?? attempt.error}`, details: [outcome] });
  }
  const outcome: ReportOutcome = { delivered: false, status, attempts };
  deps.log(`${level}: report report-failed (${status}, ${attempts.length} attempt(s))`);
  if (refused(status)) {
    const line = refusalLine(input.crawlId, input.depth, outcome);
    deps.log(line);
    deps.loud?.(line);
  }
  throw ApplicationFailure.create({ type: REPORT_FINAL, nonRetryable: true, message: `${level}: the ledger answered ${status}`, details: [outcome] });
}

async function sendHeartbeat(deps: FlowActivityDeps, input: Parameters<FlowActivities['sendHeartbeat']>[0]): Promise<boolean> {
  const client = Context.current().client;
  const progress = await Promise.all(
    input.running.map((id) =>
      client.workflow
        .getHandle(id)
        .query(sliceProgressQuery)
        .catch(() => undefined),
    ),
  );
  const body: HeartbeatBody = { depth: input.depth, pagesTotal: input.pagesTotal, pagesDone: input.pagesDoneBefore, pagesInFlight: 0, hosts: [] };
  for (const p of progress) {
    if (p === undefined) continue;
    body.pagesDone += p.pagesDone;
    body.pagesInFlight += p.pagesInFlight;
    body.hosts.push(...p.hosts);
  }
  try {
    const res = await post(input.heartbeatUrl, input, deps.auth, body, 5_000);
    await res.text().catch(() => '');
    return res.ok;
  } catch {
    return false;
  }
}

async function capturedPages(input: { slices: string[] }): Promise<string[]> {
  const results = await sliceResults(Context.current().client, input.slices);
  return results.flatMap((r) => r.pages.filter((p) => p.manifest === true).map((p) => p.url));
}

/** Dedup across levels: what the previous level's slices ended knowing. Best effort: a level that
 * cannot be read (gone from Temporal's retention) leaves this one to store its payloads again. */
async function priorPayloads(input: { crawlId: string; depth: number }): Promise<StoredPayload[]> {
  const client = Context.current().client;
  try {
    const state = await client.workflow.getHandle(levelWorkflowId(input.crawlId, input.depth)).query(levelStateQuery);
    const index = new PayloadIndex();
    for (const r of await sliceResults(client, state.slices)) index.add(r.payloads ?? []);
    return index.top(DEDUP_LIMITS.indexed);
  } catch {
    return [];
  }
}

export function createFlowActivities(deps: FlowActivityDeps): FlowActivities {
  return {
    capturedPages,
    priorPayloads,
    sendReport: (input) => sendReport(deps, input),
    sendHeartbeat: (input) => sendHeartbeat(deps, input),
  };
}
