// Sends one planned outbox batch to OpenFGA and says which rows it accepted.
//
// OpenFGA writes are transactional across the request: when any tuple in a batch is refused, none
// of the batch is written, including the tuples that were new. So a batch failure is never read as
// "already delivered": the batch is retried tuple by tuple, and only the tuples that still fail
// stay queued. A tuple that already exists counts as delivered (on_duplicate: ignore; deletes use
// on_missing: ignore).
import {
  ClientWriteRequestOnDuplicateWrites,
  ClientWriteRequestOnMissingDeletes,
  FgaApiAuthenticationError,
  FgaApiError,
  FgaApiNotFoundError,
  type OpenFgaClient,
  type TupleKey,
  type TupleKeyWithoutCondition,
} from '@openfga/sdk';
import type { OutboxRow } from '../db/types.ts';
import type { Unit } from '../domain/outbox-plan.ts';

/** What a drain reads of a queued row: the tuple, what to do with it, and where the row lies (its ctid, by which an accepted row is deleted). */
export type QueuedRow = Pick<OutboxRow, 'id' | 'operation' | 'tuple_user' | 'relation' | 'object' | 'condition'> & { ctid: string };

export interface SendOutcome {
  accepted: QueuedRow[];
  /** refused: OpenFGA refused the tuple itself (counts towards the dead letter) */
  failed: { row: QueuedRow; error: string; refused: boolean }[];
  /** set when OpenFGA could not take the write (isUnavailable): the rows are retried later, no refusal counted */
  unavailable?: string;
}

export function errorText(err: unknown): string {
  if (err instanceof FgaApiError) {
    const status = err.statusCode ? `${err.statusCode} ` : '';
    return `${status}${err.apiErrorMessage ?? err.message}`.slice(0, 2000);
  }
  return (err instanceof Error ? err.message : String(err)).slice(0, 2000);
}

/** Statuses that say OpenFGA could not take the write just now: a conflict with a concurrent
 * write (409), too many requests (429), a server error (5xx, what it answers while its own
 * database is down). The SDK retries 429 and 5xx itself first. */
const TRANSIENT_STATUS = (status: number): boolean => status === 409 || status === 429 || status >= 500;

/**
 * An error that says nothing about the tuples themselves: OpenFGA unreachable, the store or model
 * missing, credentials refused, OpenFGA overloaded or failing. Retrying tuple by tuple would only
 * repeat it, and counting it as a refusal would dead-letter every queued tuple during an outage.
 */
function isUnavailable(err: unknown): boolean {
  if (!(err instanceof FgaApiError)) return true;
  if (err instanceof FgaApiAuthenticationError || err instanceof FgaApiNotFoundError) return true;
  return err.statusCode !== undefined && TRANSIENT_STATUS(err.statusCode);
}

function toWrite(r: QueuedRow): TupleKey {
  const condition = r.condition ?? undefined;
  return {
    user: r.tuple_user,
    relation: r.relation,
    object: r.object,
    ...(condition ? { condition: { name: condition.name, context: condition.context ?? {} } } : {}),
  };
}

function toRequest(units: Unit<QueuedRow>[]): { writes: TupleKey[]; deletes: TupleKeyWithoutCondition[] } {
  const writes: TupleKey[] = [];
  const deletes: TupleKeyWithoutCondition[] = [];
  for (const { rows } of units) {
    const r = rows[0]!;
    if (r.operation === 'delete') deletes.push({ user: r.tuple_user, relation: r.relation, object: r.object });
    else writes.push(toWrite(r));
  }
  return { writes, deletes };
}

const CONFLICT = { onDuplicateWrites: ClientWriteRequestOnDuplicateWrites.Ignore, onMissingDeletes: ClientWriteRequestOnMissingDeletes.Ignore };

async function send(fga: OpenFgaClient, units: Unit<QueuedRow>[]): Promise<void> {
  await fga.write(toRequest(units), { conflict: CONFLICT });
}

/** One refused tuple sinks the whole request: find out which, one tuple at a time. */
async function sendOneByOne(fga: OpenFgaClient, units: Unit<QueuedRow>[], out: SendOutcome): Promise<void> {
  for (const unit of units) {
    if (out.unavailable !== undefined) {
      for (const row of unit.rows) out.failed.push({ row, error: out.unavailable, refused: false });
      continue;
    }
    try {
      await send(fga, [unit]);
      out.accepted.push(...unit.rows);
    } catch (single) {
      const error = errorText(single);
      const refused = !isUnavailable(single);
      if (!refused) out.unavailable = error;
      for (const row of unit.rows) out.failed.push({ row, error, refused });
    }
  }
}

/** Sends the units in one write; when OpenFGA refuses it for some tuple's sake, one by one. */
export async function sendUnits(fga: OpenFgaClient, units: Unit<QueuedRow>[]): Promise<SendOutcome> {
  const out: SendOutcome = { accepted: [], failed: [] };
  if (units.length === 0) return out;
  try {
    await send(fga, units);
    out.accepted = units.flatMap((u) => u.rows);
  } catch (err) {
    if (!isUnavailable(err)) {
      await sendOneByOne(fga, units, out);
      return out;
    }
    out.unavailable = errorText(err);
    for (const row of units.flatMap((u) => u.rows)) out.failed.push({ row, error: out.unavailable, refused: false });
  }
  return out;
}
