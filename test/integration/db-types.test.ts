// harness: not used because it compares src/db/types.ts with the schema of a test database alone (no API, OpenFGA store or worker).
// src/db/types.ts is written by hand (every query is typed from it); this proves it says what the
// migrated schema says: the same tables, the same columns, each nullable exactly where the column
// is, and of the TypeScript type node-postgres hands back for the column's type (int8 as a
// number: src/db/connect.ts installs that parser).
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { ROOT } from '../support/env.ts';

type Family = 'string' | 'number' | 'boolean' | 'date' | 'bytes' | 'json' | `${'string' | 'number' | 'bytes'}[]`;
interface Column {
  family: Family;
  nullable: boolean;
}

const PG_FAMILY: Record<string, Family> = {
  text: 'string',
  varchar: 'string',
  uuid: 'string',
  int2: 'number',
  int4: 'number',
  int8: 'number',
  bool: 'boolean',
  timestamptz: 'date',
  timestamp: 'date',
  bytea: 'bytes',
  jsonb: 'json',
  json: 'json',
  _text: 'string[]',
  _int4: 'number[]',
  _bytea: 'bytes[]',
};

// the wrappers in types.ts whose first type argument is what a select returns (Json<T> is jsonb)
const WRAPPERS = new Set(['ColumnType', 'Generated', 'GeneratedAlways']);

function declaredSchema(): Map<string, Map<string, Column>> {
  const parse = (path: string): ts.SourceFile => ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const path = ROOT + 'src/db/types.ts';
  const file = parse(path);
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  const aliases = new Map<string, ts.TypeNode>();
  const consts = new Map<string, ts.Expression>();
  file.forEachChild((n) => {
    if (ts.isInterfaceDeclaration(n)) interfaces.set(n.name.text, n);
    if (ts.isTypeAliasDeclaration(n)) aliases.set(n.name.text, n.type);
    // the column types it imports (CrawlState, StopReason, RuleAction live in src/domain)
    if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier) && n.moduleSpecifier.text.startsWith('.')) {
      const names = new Set(
        n.importClause?.namedBindings && ts.isNamedImports(n.importClause.namedBindings) ? n.importClause.namedBindings.elements.map((e) => e.name.text) : [],
      );
      parse(new URL(n.moduleSpecifier.text, `file://${path}`).pathname).forEachChild((m) => {
        if (ts.isTypeAliasDeclaration(m) && names.has(m.name.text)) aliases.set(m.name.text, m.type);
        // the `as const` lists such an alias may index ((typeof STOP_REASONS)[number])
        if (ts.isVariableStatement(m))
          for (const d of m.declarationList.declarations) if (ts.isIdentifier(d.name) && d.initializer) consts.set(d.name.text, d.initializer);
      });
    }
  });

  const unwrap = (t: ts.TypeNode): ts.TypeNode => {
    if (ts.isTypeReferenceNode(t) && WRAPPERS.has(t.typeName.getText()) && t.typeArguments?.[0]) return unwrap(t.typeArguments[0]);
    if (ts.isParenthesizedTypeNode(t)) return unwrap(t.type);
    return t;
  };
  const family = (t: ts.TypeNode): Family => {
    // jsonb holds whatever Json<T> says it holds, arrays included
    if (ts.isTypeReferenceNode(t) && /^Json(WithDefault)?$/.test(t.typeName.getText())) return 'json';
    t = unwrap(t);
    if (ts.isArrayTypeNode(t)) return `${family(t.elementType)}[]` as Family;
    if (ts.isUnionTypeNode(t)) {
      const fams = new Set(t.types.map(family));
      if (fams.size !== 1) throw new Error(`mixed union ${t.getText()}`);
      return [...fams][0]!;
    }
    if (ts.isIndexedAccessTypeNode(t)) {
      // (typeof LIST)[number] over a list of string literals `as const`
      const list = ts.isParenthesizedTypeNode(t.objectType) ? t.objectType.type : t.objectType;
      let init = ts.isTypeQueryNode(list) ? consts.get(list.exprName.getText()) : undefined;
      if (init !== undefined && ts.isAsExpression(init)) init = init.expression;
      if (init !== undefined && ts.isArrayLiteralExpression(init) && init.elements.every(ts.isStringLiteral)) return 'string';
    }
    if (ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal)) return 'string';
    if (t.kind === ts.SyntaxKind.StringKeyword) return 'string';
    if (t.kind === ts.SyntaxKind.NumberKeyword) return 'number';
    if (t.kind === ts.SyntaxKind.BooleanKeyword) return 'boolean';
    if (t.kind === ts.SyntaxKind.UnknownKeyword || ts.isTypeLiteralNode(t)) return 'json';
    if (ts.isTypeReferenceNode(t)) {
      const name = t.typeName.getText();
      if (name === 'Date' || name === 'Timestamp') return 'date';
      if (name === 'Buffer') return 'bytes';
      if (name === 'Record') return 'json';
      const alias = aliases.get(name);
      if (alias) return family(alias);
      if (interfaces.has(name)) return 'json';
    }
    throw new Error(`no column type family for ${t.getText()}`);
  };
  const nullable = (t: ts.TypeNode): boolean => {
    t = unwrap(t);
    return ts.isUnionTypeNode(t) && t.types.some((m) => ts.isLiteralTypeNode(m) && m.literal.kind === ts.SyntaxKind.NullKeyword);
  };
  const withoutNull = (t: ts.TypeNode): ts.TypeNode => {
    t = unwrap(t);
    if (!ts.isUnionTypeNode(t)) return t;
    const rest = t.types.filter((m) => !(ts.isLiteralTypeNode(m) && m.literal.kind === ts.SyntaxKind.NullKeyword));
    return rest.length === 1 ? rest[0]! : ts.factory.createUnionTypeNode(rest);
  };

  const tables = new Map<string, Map<string, Column>>();
  for (const m of interfaces.get('Database')!.members) {
    if (!ts.isPropertySignature(m) || !m.type || !ts.isTypeReferenceNode(m.type)) throw new Error(`Database member ${m.getText()} is not a table interface`);
    const table = interfaces.get(m.type.typeName.getText());
    if (!table) throw new Error(`no interface ${m.type.typeName.getText()} in types.ts`);
    const columns = new Map<string, Column>();
    for (const c of table.members) {
      if (!ts.isPropertySignature(c) || !c.type) continue;
      const name = c.name.getText();
      try {
        columns.set(name, { family: family(withoutNull(c.type)), nullable: nullable(c.type) });
      } catch (err) {
        throw new Error(`${m.name.getText()}.${name}: ${(err as Error).message}`);
      }
    }
    tables.set(m.name.getText(), columns);
  }
  return tables;
}

let tdb: TestDatabase;
let migrated: Map<string, Map<string, Column & { pgType: string; generated: boolean }>>;

beforeAll(async () => {
  tdb = await createTestDatabase();
  // schema_migrations is the migrator's own bookkeeping (src/db/migrate.ts), not a table queries use
  const rows = await sql<{ table_name: string; column_name: string; udt_name: string; is_nullable: 'YES' | 'NO'; is_generated: 'ALWAYS' | 'NEVER' }>`
    SELECT table_name, column_name, udt_name, is_nullable, is_generated FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name <> 'schema_migrations' ORDER BY table_name, ordinal_position`.execute(tdb.db);
  migrated = new Map();
  for (const r of rows.rows) {
    const table = migrated.get(r.table_name) ?? new Map();
    table.set(r.column_name, {
      family: PG_FAMILY[r.udt_name] ?? (`unmapped ${r.udt_name}` as Family),
      nullable: r.is_nullable === 'YES',
      pgType: r.udt_name,
      generated: r.is_generated === 'ALWAYS',
    });
    migrated.set(r.table_name, table);
  }
});

afterAll(async () => {
  await tdb?.drop();
});

describe('src/db/types.ts against the migrated schema', () => {
  it('declares exactly the tables the migrations create', () => {
    expect([...declaredSchema().keys()].sort()).toEqual([...migrated.keys()].sort());
  });

  it('declares exactly the columns of each table, nullable where the column is, of the type node-postgres returns', () => {
    const declared = declaredSchema();
    const differences: string[] = [];
    for (const [table, columns] of migrated) {
      const mine = declared.get(table);
      if (!mine) continue; // the test above names it
      for (const [name, col] of columns) {
        const d = mine.get(name);
        if (!d) differences.push(`${table}.${name} (${col.pgType}) is not declared`);
        else {
          if (d.family !== col.family) differences.push(`${table}.${name}: declared ${d.family}, the column is ${col.pgType} (${col.family})`);
          // a generated column carries no NOT NULL of its own; its expression decides (url_hash: sha256 of a NOT NULL url)
          if (d.nullable !== col.nullable && !(col.generated && !d.nullable))
            differences.push(`${table}.${name}: declared ${d.nullable ? 'nullable' : 'NOT NULL'}, the column is ${col.nullable ? 'nullable' : 'NOT NULL'}`);
        }
      }
      for (const name of mine.keys()) if (!columns.has(name)) differences.push(`${table}.${name} is declared but the table has no such column`);
    }
    expect(differences).toEqual([]);
  });
});
