// GET /api/crawls/:id/progress and GET /api/crawls/:id/pacing
import Type from 'typebox';
import { CrawlStateSchema } from './crawls.ts';
import { HostProgress } from './levels.ts';
import { Nullable } from './common.ts';

const LevelView = Type.Object({
  depth: Type.Integer(),
  pages: Type.Integer(),
  captured: Type.Integer(),
  failed: Type.Integer(),
  skipped: Type.Integer(),
  pending: Type.Integer(),
  cut: Type.Integer(),
  dispatched: Nullable(Type.Integer()),
  redispatches: Type.Integer(),
  heartbeat: Nullable(Type.Object({ receivedAt: Type.String(), pagesTotal: Type.Integer(), pagesDone: Type.Integer(), pagesInFlight: Type.Integer() })),
});

export const Progress = Type.Object({
  crawlId: Type.String(),
  state: CrawlStateSchema,
  stopReason: Nullable(Type.String()),
  failure: Nullable(Type.String()),
  phase: Nullable(Type.String({ description: 'starting, dispatching, waiting, admitting, finishing, done; null when the workflow was not asked' })),
  depth: Nullable(Type.Integer()),
  maxDepth: Type.Integer(),
  source: Type.Unsafe<'workflow' | 'ledger'>({ type: 'string', enum: ['workflow', 'ledger'] }),
  levels: Type.Array(LevelView),
  hosts: Type.Array(HostProgress),
});

export const Pacing = Type.Object({
  crawlId: Type.String(),
  perHostDelayMs: Type.Integer(),
  violations: Type.Integer({ description: 'gaps shorter than their host is owed, over all hosts (expected 0)' }),
  hosts: Type.Array(
    Type.Object({
      host: Type.String(),
      pages: Type.Integer(),
      minGapMs: Nullable(Type.Integer({ description: "from one capture's finish to the next submit on the host, rounded down" })),
      effectiveDelayMs: Type.Integer(),
      violations: Type.Integer(),
      overlaps: Type.Integer({ description: 'negative gaps: two captures on the host at once' }),
      gapsMs: Type.Array(Type.Integer(), { description: 'each gap in submit order (ms, rounded down; negative: an overlap), the first 500' }),
    }),
  ),
});
