// The column types kysely-codegen cannot read from the schema: what a jsonb column holds, a
// generated column, and the text columns the code narrows to a union. .kysely-codegenrc.json
// names them per column; src/db/schema.generated.ts imports them from here.
import type { ColumnType } from 'kysely';

/** a column the database computes (GENERATED ALWAYS): read only */
export type GeneratedAlways<T> = ColumnType<T, never, never>;
/** jsonb read as T, written as T or its JSON text */
export type JsonColumn<T> = ColumnType<T, T | string, T | string>;
/** jsonb with a database default: optional on insert */
export type JsonWithDefault<T> = ColumnType<T, T | string | undefined, T | string>;

export type PageState = 'pending' | 'captured' | 'failed' | 'skipped';
/** the condition an outbox tuple is written with */
export interface OutboxCondition {
  name: string;
  context?: Record<string, unknown>;
}
