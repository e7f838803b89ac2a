import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import pg from 'pg';
import type { getDMMF } from '@prisma/get-dmmf';
import { quoteIdent } from './client';

/**
 * Compares the structure of a migrated PostgreSQL schema with the one
 * schema.prisma describes, without Prisma's schema engine:
 *
 *   schema.prisma --getDMMF--> expected DatabaseShape ┐
 *                                                     ├─ compareShapes --> problems
 *   pg_catalog ------------->  actual DatabaseShape   ┘
 *
 * Both sides are reduced to the same plain shape (tables, columns, keys,
 * indexes, foreign keys, enums) so the comparison never needs to know where a
 * shape came from. The expected side follows what `prisma migrate dev` would
 * generate for PostgreSQL: Prisma's default type for each scalar, its default
 * constraint names, nullable scalar lists, and so on.
 *
 * Not covered: foreign-key constraint names (the DMMF does not carry
 * `@relation(map: ...)`), index operator classes, check constraints, views,
 * and `Unsupported(...)` fields, which the DMMF leaves out.
 */

export const SCHEMA_PRISMA_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'prisma', 'schema.prisma');

export interface DriftReport {
  problems: string[];
}

export interface FindSchemaDriftOptions {
  url: string;
  /** The PostgreSQL schema the migrations were applied to. */
  schema: string;
  /** A schema file, or a folder of .prisma files; defaults to prisma/schema.prisma. */
  schemaPrismaPath?: string;
}

export async function findSchemaDrift(options: FindSchemaDriftOptions): Promise<DriftReport> {
  const datamodel = await readDatamodel(options.schemaPrismaPath ?? SCHEMA_PRISMA_PATH);
  const expected = expectedFromDatamodel(datamodel);
  const actual = await actualFromDatabase(options.url, options.schema);
  return { problems: compareShapes(expected, actual) };
}

// ---------------------------------------------------------------------------
// The shape both sides are reduced to
// ---------------------------------------------------------------------------

export interface DatabaseShape {
  tables: Map<string, TableShape>;
  /** Enum type name → its values in order. */
  enums: Map<string, string[]>;
}

export interface TableShape {
  name: string;
  columns: Map<string, ColumnShape>;
  primaryKey: PrimaryKeyShape | null;
  indexes: IndexShape[];
  foreignKeys: ForeignKeyShape[];
}

export interface ColumnShape {
  name: string;
  /** As PostgreSQL's format_type() spells it: `character varying(255)`, `timestamp(6) with time zone`, `text[]`. */
  type: string;
  nullable: boolean;
  default: ColumnDefault;
}

export type ColumnDefault =
  | { kind: 'none' }
  /** `dbgenerated()` without an argument: some database default, whatever it is. */
  | { kind: 'any' }
  | { kind: 'now' }
  | { kind: 'autoincrement' }
  | { kind: 'value'; values: Literal[]; isArray: boolean }
  | { kind: 'expression'; sql: string };

export interface Literal {
  text: string;
  /** Only for display: strings are shown quoted. Comparison ignores it (PostgreSQL shows -1 as '-1'::integer). */
  quoted: boolean;
}

export interface PrimaryKeyShape {
  name: string;
  columns: string[];
}

export interface IndexShape {
  name: string;
  /** Column names; an expression index lists the expression instead. */
  columns: string[];
  unique: boolean;
  /** Access method, lower case: btree, hash, gin, gist, spgist, brin. */
  method: string;
  descending: boolean[];
  /** The WHERE clause of a partial index. */
  predicate: string | null;
}

export interface ForeignKeyShape {
  columns: string[];
  referencedTable: string;
  referencedColumns: string[];
  /** Prisma's spelling: Cascade, Restrict, NoAction, SetNull, SetDefault. */
  onDelete: string;
  onUpdate: string;
}

// ---------------------------------------------------------------------------
// Expected: schema.prisma → DMMF → shape
// ---------------------------------------------------------------------------

type DmmfDocument = Exclude<ReturnType<typeof getDMMF>, { error: Error }>;
type Datamodel = DmmfDocument['datamodel'];
type Model = Datamodel['models'][number];
type Field = Model['fields'][number];
type FieldDefault = NonNullable<Field['default']>;

const POSTGRES_IDENTIFIER_LIMIT = 63;

async function readDatamodel(path: string): Promise<Datamodel> {
  // Loaded on first use, so importing this module never requires the devDependency.
  const { getDMMF } = await import('@prisma/get-dmmf');
  const result = getDMMF({ datamodel: await readSchemaFiles(path) });
  if ('error' in result) {
    throw new Error(`Cannot read ${path}: ${result.reason} ${stripVTControlCharacters(result.error.message)}`);
  }
  return result.datamodel;
}

/** One file, or every .prisma file under a folder (Prisma's multi-file schemas). */
async function readSchemaFiles(path: string): Promise<string | Array<[string, string]>> {
  if (!(await stat(path)).isDirectory()) return readFile(path, 'utf8');
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.prisma'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  return Promise.all(files.map(async (file): Promise<[string, string]> => [file, await readFile(file, 'utf8')]));
}

export function expectedFromDatamodel(datamodel: Datamodel): DatabaseShape {
  const enums = new Map(
    datamodel.enums.map((enumType) => [
      enumType.dbName ?? enumType.name,
      enumType.values.map((value) => value.dbName ?? value.name),
    ]),
  );
  const models = new Map(datamodel.models.map((model) => [model.name, model]));
  const tables = new Map<string, TableShape>();
  for (const model of datamodel.models) {
    const table = expectedTable(model, datamodel, models);
    tables.set(table.name, table);
  }
  for (const table of implicitManyToManyTables(datamodel, models)) tables.set(table.name, table);
  return { tables, enums };
}

function tableName(model: Model): string {
  return model.dbName ?? model.name;
}

function columnName(field: Field): string {
  return field.dbName ?? field.name;
}

function columnNamesOf(model: Model, fieldNames: readonly string[]): string[] {
  return fieldNames.map((fieldName) => {
    const field = model.fields.find((candidate) => candidate.name === fieldName);
    return field ? columnName(field) : fieldName;
  });
}

function expectedTable(model: Model, datamodel: Datamodel, models: Map<string, Model>): TableShape {
  const columns = model.fields
    .filter((field) => field.kind === 'scalar' || field.kind === 'enum')
    .map((field) => expectedColumn(field, datamodel));
  const foreignKeys = model.fields
    .filter((field) => field.kind === 'object' && (field.relationFromFields?.length ?? 0) > 0)
    .map((field) => expectedForeignKey(model, field, models));
  return {
    name: tableName(model),
    columns: new Map(columns.map((column) => [column.name, column])),
    ...expectedKeys(model, datamodel),
    foreignKeys,
  };
}

/** The primary key and the indexes (@id/@@id, @unique/@@unique, @@index) of one model. */
function expectedKeys(model: Model, datamodel: Datamodel): Pick<TableShape, 'primaryKey' | 'indexes'> {
  const table = tableName(model);
  let primaryKey: PrimaryKeyShape | null = null;
  const indexes: IndexShape[] = [];
  for (const index of datamodel.indexes.filter((candidate) => candidate.model === model.name)) {
    const columns = columnNamesOf(model, index.fields.map((field) => field.name));
    if (index.type === 'id') {
      primaryKey = { name: index.dbName ?? defaultConstraintName(table, [], '_pkey'), columns };
    } else if (index.type === 'unique' || index.type === 'normal') {
      const unique = index.type === 'unique';
      indexes.push({
        name: index.dbName ?? defaultConstraintName(table, columns, unique ? '_key' : '_idx'),
        columns,
        unique,
        method: (index.algorithm ?? 'BTree').toLowerCase(),
        descending: index.fields.map((field) => field.sortOrder === 'desc'),
        predicate: null,
      });
    }
  }
  return { primaryKey, indexes };
}

function expectedColumn(field: Field, datamodel: Datamodel): ColumnShape {
  return {
    name: columnName(field),
    type: expectedColumnType(field, datamodel),
    // Prisma creates scalar lists without NOT NULL.
    nullable: !field.isRequired || field.isList,
    default: expectedDefault(field, datamodel),
  };
}

/** Spelled the way format_type() prints it, so it compares directly with the database. */
function expectedColumnType(field: Field, datamodel: Datamodel): string {
  let type: string;
  if (field.kind === 'enum') {
    const enumType = datamodel.enums.find((candidate) => candidate.name === field.type);
    type = enumType?.dbName ?? field.type;
  } else if (field.nativeType) {
    type = nativeTypeName(field.nativeType[0], field.nativeType[1]);
  } else {
    type = DEFAULT_SCALAR_TYPES[field.type] ?? field.type;
  }
  return field.isList ? `${type}[]` : type;
}

const DEFAULT_SCALAR_TYPES: Record<string, string> = {
  String: 'text',
  Boolean: 'boolean',
  Int: 'integer',
  BigInt: 'bigint',
  Float: 'double precision',
  Decimal: 'numeric(65,30)',
  DateTime: 'timestamp(3) without time zone',
  Json: 'jsonb',
  Bytes: 'bytea',
};

function nativeTypeName(name: string, args: readonly string[]): string {
  const params = args.length ? `(${args.join(',')})` : '';
  switch (name) {
    case 'VarChar':
      return `character varying${params}`;
    case 'Char':
      return `character${params}`;
    case 'VarBit':
      return `bit varying${params}`;
    case 'Decimal':
      return `numeric${params}`;
    case 'DoublePrecision':
      return 'double precision';
    case 'JsonB':
      return 'jsonb';
    case 'Timestamp':
      return `timestamp${params} without time zone`;
    case 'Timestamptz':
      return `timestamp${params} with time zone`;
    case 'Time':
      return `time${params} without time zone`;
    case 'Timetz':
      return `time${params} with time zone`;
    case 'ByteA':
      return 'bytea';
    default:
      // Uuid, Text, SmallInt, Integer, BigInt, Real, Boolean, Date, Json, Xml, Inet, Citext, Money, Oid, Bit(n)
      return `${name.toLowerCase()}${params}`;
  }
}

function expectedDefault(field: Field, datamodel: Datamodel): ColumnDefault {
  const value = field.default;
  if (value === undefined) return { kind: 'none' };
  // An enum default names the Prisma value; the database holds its @map name.
  const enumValues = field.kind === 'enum' ? datamodel.enums.find((candidate) => candidate.name === field.type)?.values : undefined;
  const dbValue = (text: string) => enumValues?.find((candidate) => candidate.name === text)?.dbName ?? text;
  const literalOf = (item: string | number | boolean): Literal => ({ text: dbValue(String(item)), quoted: typeof item === 'string' });
  if (isScalarList(value)) return { kind: 'value', isArray: true, values: value.map(literalOf) };
  if (typeof value !== 'object') return { kind: 'value', isArray: false, values: [literalOf(value)] };
  switch (value.name) {
    case 'now':
      return { kind: 'now' };
    case 'autoincrement':
    case 'sequence':
      return { kind: 'autoincrement' };
    case 'dbgenerated': {
      // Read like the database's own default, so dbgenerated("'x'::text") equals the literal 'x'.
      const sql = value.args[0];
      return sql === undefined ? { kind: 'any' } : parseDatabaseDefault(String(sql));
    }
    default:
      // uuid(), cuid(), nanoid(), ulid(): generated by the client, nothing in the database.
      return { kind: 'none' };
  }
}

// Array.isArray does not narrow readonly arrays.
function isScalarList(value: FieldDefault): value is Extract<FieldDefault, readonly unknown[]> {
  return Array.isArray(value);
}

function expectedForeignKey(model: Model, field: Field, models: Map<string, Model>): ForeignKeyShape {
  const target = models.get(field.type);
  return {
    columns: columnNamesOf(model, field.relationFromFields ?? []),
    referencedTable: target ? tableName(target) : field.type,
    referencedColumns: target ? columnNamesOf(target, field.relationToFields ?? []) : [...(field.relationToFields ?? [])],
    // Prisma's defaults: a required relation restricts deletes, an optional one nulls the reference.
    onDelete: field.relationOnDelete ?? (field.isRequired ? 'Restrict' : 'SetNull'),
    onUpdate: field.relationOnUpdate ?? 'Cascade',
  };
}

/**
 * `<table>_<columns>_<suffix>`, cut so that it fits PostgreSQL's 63-byte
 * identifiers the way Prisma cuts it (the suffix always survives).
 */
export function defaultConstraintName(table: string, columns: readonly string[], suffix: string): string {
  const base = columns.length ? `${table}_${columns.join('_')}` : table;
  return base.slice(0, POSTGRES_IDENTIFIER_LIMIT - suffix.length) + suffix;
}

/**
 * A list relation on both sides without `fields`/`references` is stored in a
 * join table `_<RelationName>` with columns A and B, A pointing at the model
 * whose name sorts first.
 */
function implicitManyToManyTables(datamodel: Datamodel, models: Map<string, Model>): TableShape[] {
  const relations = new Map<string, Model[]>();
  for (const model of datamodel.models) {
    for (const field of model.fields) {
      if (field.kind !== 'object' || !field.isList || !field.relationName) continue;
      const target = models.get(field.type);
      const backRelations = target?.fields.filter(
        (candidate) => candidate.relationName === field.relationName && candidate.kind === 'object',
      );
      if (!backRelations?.every((candidate) => candidate.isList)) continue;
      relations.set(field.relationName, [...(relations.get(field.relationName) ?? []), model]);
    }
  }
  const tables: TableShape[] = [];
  for (const [relationName, sides] of relations) {
    const [a, b] = [...sides].sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    if (!a) continue;
    const name = `_${relationName}`;
    const joinColumn = (column: 'A' | 'B', model: Model): [ColumnShape, ForeignKeyShape] => {
      const id = model.fields.find((field) => field.isId);
      return [
        { name: column, type: id ? expectedColumnType(id, datamodel) : 'unknown', nullable: false, default: { kind: 'none' } },
        {
          columns: [column],
          referencedTable: tableName(model),
          referencedColumns: id ? [columnName(id)] : [],
          onDelete: 'Cascade',
          onUpdate: 'Cascade',
        },
      ];
    };
    const [columnA, foreignKeyA] = joinColumn('A', a);
    const [columnB, foreignKeyB] = joinColumn('B', b ?? a);
    tables.push({
      name,
      columns: new Map([
        ['A', columnA],
        ['B', columnB],
      ]),
      primaryKey: { name: defaultConstraintName(name, ['AB'], '_pkey'), columns: ['A', 'B'] },
      indexes: [
        { name: `${name}_B_index`, columns: ['B'], unique: false, method: 'btree', descending: [false], predicate: null },
      ],
      foreignKeys: [foreignKeyA, foreignKeyB],
    });
  }
  return tables;
}

// ---------------------------------------------------------------------------
// Actual: pg_catalog → shape
// ---------------------------------------------------------------------------

const IGNORED_TABLES = new Set(['_prisma_migrations']);

const FOREIGN_KEY_ACTIONS: Record<string, string> = {
  a: 'NoAction',
  r: 'Restrict',
  c: 'Cascade',
  n: 'SetNull',
  d: 'SetDefault',
};

export async function actualFromDatabase(url: string, schema: string): Promise<DatabaseShape> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // With the schema on the search path, format_type() names its types without qualification.
    await client.query(`SET search_path TO ${quoteIdent(schema)}, public`);
    const tables = await readTables(client, schema);
    const oids = [...tables.keys()];
    await readColumns(client, oids, tables);
    await readIndexes(client, oids, tables);
    await readForeignKeys(client, oids, tables, schema);
    const enums = await readEnums(client, schema);
    return { tables: new Map([...tables.values()].map((table) => [table.name, table])), enums };
  } finally {
    await client.end();
  }
}

async function readTables(client: pg.Client, schema: string): Promise<Map<string, TableShape>> {
  const { rows } = await client.query<{ oid: string; name: string }>(
    `SELECT c.oid::text AS oid, c.relname AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition`,
    [schema],
  );
  return new Map(
    rows
      .filter((row) => !IGNORED_TABLES.has(row.name))
      .map((row) => [row.oid, { name: row.name, columns: new Map(), primaryKey: null, indexes: [], foreignKeys: [] }]),
  );
}

async function readColumns(client: pg.Client, oids: string[], tables: Map<string, TableShape>): Promise<void> {
  const { rows } = await client.query<{
    table_oid: string;
    name: string;
    type: string;
    not_null: boolean;
    default_sql: string | null;
    identity: string;
  }>(
    `SELECT a.attrelid::text AS table_oid, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
            a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS default_sql, a.attidentity::text AS identity
       FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attrelid, a.attnum`,
    [oids],
  );
  for (const row of rows) {
    tables.get(row.table_oid)?.columns.set(row.name, {
      name: row.name,
      type: row.type.replaceAll('"', ''),
      nullable: !row.not_null,
      default: row.identity ? { kind: 'autoincrement' } : parseDatabaseDefault(row.default_sql),
    });
  }
}

async function readIndexes(client: pg.Client, oids: string[], tables: Map<string, TableShape>): Promise<void> {
  const { rows } = await client.query<{
    table_oid: string;
    name: string;
    primary: boolean;
    unique: boolean;
    method: string;
    predicate: string | null;
    columns: string[];
    descending: boolean[];
  }>(
    `SELECT i.indrelid::text AS table_oid, ic.relname AS name, i.indisprimary AS primary, i.indisunique AS unique,
            am.amname AS method, pg_get_expr(i.indpred, i.indrelid) AS predicate,
            ARRAY(SELECT CASE WHEN i.indkey[k] = 0 THEN pg_get_indexdef(i.indexrelid, k + 1, true)
                              ELSE (SELECT a.attname::text FROM pg_attribute a
                                     WHERE a.attrelid = i.indrelid AND a.attnum = i.indkey[k]) END
                    FROM generate_series(0, i.indnkeyatts - 1) k ORDER BY k) AS columns,
            ARRAY(SELECT (i.indoption[k] & 1) = 1 FROM generate_series(0, i.indnkeyatts - 1) k ORDER BY k) AS descending
       FROM pg_index i
       JOIN pg_class ic ON ic.oid = i.indexrelid
       JOIN pg_am am ON am.oid = ic.relam
      WHERE i.indrelid = ANY($1::oid[])`,
    [oids],
  );
  for (const row of rows) {
    const table = tables.get(row.table_oid);
    if (!table) continue;
    if (row.primary) {
      table.primaryKey = { name: row.name, columns: row.columns };
      continue;
    }
    table.indexes.push({
      name: row.name,
      columns: row.columns,
      unique: row.unique,
      method: row.method,
      descending: row.descending,
      predicate: row.predicate,
    });
  }
}

async function readForeignKeys(
  client: pg.Client,
  oids: string[],
  tables: Map<string, TableShape>,
  schema: string,
): Promise<void> {
  const { rows } = await client.query<{
    table_oid: string;
    referenced_schema: string;
    referenced_table: string;
    columns: string[];
    referenced_columns: string[];
    on_delete: string;
    on_update: string;
  }>(
    `SELECT c.conrelid::text AS table_oid, rn.nspname AS referenced_schema, r.relname AS referenced_table,
            ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(attnum, position)
                    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.position) AS columns,
            ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(attnum, position)
                    JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.position) AS referenced_columns,
            c.confdeltype::text AS on_delete, c.confupdtype::text AS on_update
       FROM pg_constraint c
       JOIN pg_class r ON r.oid = c.confrelid
       JOIN pg_namespace rn ON rn.oid = r.relnamespace
      WHERE c.contype = 'f' AND c.conrelid = ANY($1::oid[])`,
    [oids],
  );
  for (const row of rows) {
    tables.get(row.table_oid)?.foreignKeys.push({
      columns: row.columns,
      referencedTable:
        row.referenced_schema === schema ? row.referenced_table : `${row.referenced_schema}.${row.referenced_table}`,
      referencedColumns: row.referenced_columns,
      onDelete: FOREIGN_KEY_ACTIONS[row.on_delete] ?? row.on_delete,
      onUpdate: FOREIGN_KEY_ACTIONS[row.on_update] ?? row.on_update,
    });
  }
}

async function readEnums(client: pg.Client, schema: string): Promise<Map<string, string[]>> {
  const { rows } = await client.query<{ name: string; value: string }>(
    `SELECT t.typname AS name, e.enumlabel AS value
       FROM pg_type t
       JOIN pg_namespace n ON n.oid = t.typnamespace
       JOIN pg_enum e ON e.enumtypid = t.oid
      WHERE n.nspname = $1
      ORDER BY t.typname, e.enumsortorder`,
    [schema],
  );
  const enums = new Map<string, string[]>();
  for (const row of rows) enums.set(row.name, [...(enums.get(row.name) ?? []), row.value]);
  return enums;
}

// ---------------------------------------------------------------------------
// Column defaults as PostgreSQL prints them (pg_get_expr)
// ---------------------------------------------------------------------------

/** A cast as pg_get_expr prints it: ::text, ::character varying, ::"Scope", ::timestamp(3) without time zone, ::text[]. */
const CAST =
  /^::(?:"(?:[^"]|"")+"|[a-z_][\w$]*)(?:\.(?:"(?:[^"]|"")+"|[a-z_][\w$]*))?(?:\s+(?:varying|precision))?(?:\(\s*\d+(?:\s*,\s*\d+)?\s*\))?(?:\s+with(?:out)?\s+time\s+zone)?((?:\[\])*)/i;
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?/i;

export function parseDatabaseDefault(sql: string | null): ColumnDefault {
  if (sql === null) return { kind: 'none' };
  const trimmed = sql.trim();
  if (/^nextval\(/i.test(trimmed)) return { kind: 'autoincrement' };
  if (/^(?:CURRENT_TIMESTAMP(?:\(\d+\))?|now\(\))$/i.test(trimmed)) return { kind: 'now' };
  const literal = parseLiteralDefault(trimmed);
  if (literal?.kind === 'value' && !literal.isArray && literal.values[0]?.text === 'null' && !literal.values[0].quoted) {
    return { kind: 'none' };
  }
  return literal ?? { kind: 'expression', sql: trimmed };
}

/** Literals, possibly cast, possibly in ARRAY[...]; null when the default is any other expression. */
function parseLiteralDefault(sql: string): ColumnDefault | null {
  const parser = new LiteralParser(sql);
  const result = parser.parseDefault();
  return result && parser.atEnd() ? result : null;
}

class LiteralParser {
  private rest: string;

  constructor(sql: string) {
    this.rest = sql;
  }

  atEnd(): boolean {
    return this.rest.trim() === '';
  }

  parseDefault(): ColumnDefault | null {
    if (this.take(/^ARRAY\s*\[/i)) {
      const values: Literal[] = [];
      while (!this.take(/^\s*\]/)) {
        if (values.length && !this.take(/^\s*,\s*/)) return null;
        const value = this.parseScalar();
        if (!value) return null;
        values.push(value.literal);
      }
      this.skipCasts();
      return { kind: 'value', isArray: true, values };
    }
    const scalar = this.parseScalar();
    if (!scalar) return null;
    // '{a,b}'::text[] is the other way PostgreSQL spells an array.
    if (scalar.arrayCast && scalar.literal.quoted) {
      const values = parseArrayText(scalar.literal.text);
      return values && { kind: 'value', isArray: true, values };
    }
    return { kind: 'value', isArray: false, values: [scalar.literal] };
  }

  private parseScalar(): { literal: Literal; arrayCast: boolean } | null {
    this.take(/^\s+/);
    if (this.take(/^\(/)) {
      const inner = this.parseScalar();
      if (!inner || !this.take(/^\s*\)/)) return null;
      return { literal: inner.literal, arrayCast: this.skipCasts() || inner.arrayCast };
    }
    let literal: Literal | null = null;
    const string = this.take(/^E?'((?:[^']|'')*)'/);
    if (string) literal = { text: unescapeString(string[1] ?? '', string[0].startsWith('E')), quoted: true };
    const number = literal ? null : this.take(NUMBER);
    if (number) literal = { text: number[0], quoted: false };
    const keyword = literal ? null : this.take(/^(?:true|false|NULL)\b/i);
    if (keyword) literal = { text: keyword[0].toLowerCase(), quoted: false };
    return literal && { literal, arrayCast: this.skipCasts() };
  }

  /** Skips any casts; true if one of them is to an array type. */
  private skipCasts(): boolean {
    let arrayCast = false;
    for (let cast = this.take(CAST); cast; cast = this.take(CAST)) arrayCast = arrayCast || Boolean(cast[1]);
    return arrayCast;
  }

  private take(pattern: RegExp): RegExpExecArray | null {
    const match = pattern.exec(this.rest);
    if (match) this.rest = this.rest.slice(match[0].length);
    return match;
  }
}

function unescapeString(body: string, escapeSyntax: boolean): string {
  const text = body.replaceAll("''", "'");
  return escapeSyntax ? text.replace(/\\(.)/g, '$1') : text;
}

/** PostgreSQL's array text: {a,"b c",NULL}. */
function parseArrayText(text: string): Literal[] | null {
  const body = /^\{(.*)\}$/s.exec(text)?.[1];
  if (body === undefined) return null;
  if (body === '') return [];
  const items: Literal[] = [];
  const item = /\s*(?:"((?:[^"\\]|\\.)*)"|([^,]*?))\s*(?:,|$)/gy;
  for (let match = item.exec(body); match && item.lastIndex <= body.length; match = item.exec(body)) {
    const quoted = match[1];
    items.push(
      quoted !== undefined ? { text: quoted.replace(/\\(.)/g, '$1'), quoted: true } : { text: match[2] ?? '', quoted: true },
    );
    if (item.lastIndex === body.length) break;
  }
  return items;
}

// ---------------------------------------------------------------------------
// Compare
// ---------------------------------------------------------------------------

export function compareShapes(expected: DatabaseShape, actual: DatabaseShape): string[] {
  return [
    ...compareEnums(expected.enums, actual.enums),
    ...compareTableSets(expected, actual),
    ...[...expected.tables.values()].flatMap((table) => {
      const actualTable = actual.tables.get(table.name);
      return actualTable ? compareTable(table, actualTable) : [];
    }),
  ];
}

function compareEnums(expected: Map<string, string[]>, actual: Map<string, string[]>): string[] {
  const problems: string[] = [];
  for (const [name, values] of expected) {
    const actualValues = actual.get(name);
    if (!actualValues) problems.push(`enum ${name}: missing from the database`);
    else if (values.join('\n') !== actualValues.join('\n')) {
      problems.push(`enum ${name}: expected values (${values.join(', ')}), database has (${actualValues.join(', ')})`);
    }
  }
  for (const name of actual.keys()) {
    if (!expected.has(name)) problems.push(`enum ${name}: exists in the database but not in schema.prisma`);
  }
  return problems;
}

function compareTableSets(expected: DatabaseShape, actual: DatabaseShape): string[] {
  return [
    ...[...expected.tables.keys()]
      .filter((name) => !actual.tables.has(name))
      .map((name) => `table ${name}: missing from the database`),
    ...[...actual.tables.keys()]
      .filter((name) => !expected.tables.has(name))
      .map((name) => `table ${name}: exists in the database but not in schema.prisma`),
  ];
}

function compareTable(expected: TableShape, actual: TableShape): string[] {
  return [
    ...compareColumns(expected, actual),
    ...comparePrimaryKeys(expected, actual),
    ...compareIndexes(expected, actual),
    ...compareForeignKeys(expected, actual),
  ];
}

function compareColumns(expected: TableShape, actual: TableShape): string[] {
  const problems: string[] = [];
  for (const column of expected.columns.values()) {
    const where = `${expected.name}.${column.name}`;
    const actualColumn = actual.columns.get(column.name);
    if (!actualColumn) {
      problems.push(`${where}: column missing from the database`);
      continue;
    }
    if (column.type !== actualColumn.type) {
      problems.push(`${where}: expected ${column.type}, database has ${actualColumn.type}`);
    }
    if (column.nullable !== actualColumn.nullable) {
      problems.push(
        column.nullable
          ? `${where}: expected nullable, database has NOT NULL`
          : `${where}: expected NOT NULL, database has nullable`,
      );
    }
    if (!defaultsMatch(column.default, actualColumn.default, column.type)) {
      problems.push(
        `${where}: expected default ${describeDefault(column.default)}, database has ${describeDefault(actualColumn.default)}`,
      );
    }
  }
  for (const name of actual.columns.keys()) {
    if (!expected.columns.has(name)) {
      problems.push(`${expected.name}.${name}: column exists in the database but not in schema.prisma`);
    }
  }
  return problems;
}

function defaultsMatch(expected: ColumnDefault, actual: ColumnDefault, type: string): boolean {
  if (expected.kind === 'any') return actual.kind !== 'none';
  if (expected.kind !== actual.kind) return false;
  if (expected.kind === 'expression' && actual.kind === 'expression') {
    return normalizeSql(expected.sql) === normalizeSql(actual.sql);
  }
  if (expected.kind !== 'value' || actual.kind !== 'value') return true;
  return (
    expected.isArray === actual.isArray &&
    expected.values.length === actual.values.length &&
    expected.values.every((value, index) => literalsMatch(value.text, actual.values[index]?.text ?? '', type))
  );
}

/** Compares by meaning for the column's type: 1.5 = 1.50, -1 = '-1'::integer, equal JSON, equal instants. */
function literalsMatch(expected: string, actual: string, type: string): boolean {
  if (expected === actual) return true;
  const baseType = type.replace(/(\[\])+$/, '');
  if (/^(smallint|integer|bigint|real|double precision|numeric|money|oid)\b/.test(baseType)) {
    return Number(expected) === Number(actual) && !Number.isNaN(Number(expected));
  }
  if (/^jsonb?$/.test(baseType)) return canonicalJson(expected) === canonicalJson(actual);
  if (/^(timestamp|date)\b/.test(baseType)) {
    const [left, right] = [parseInstant(expected), parseInstant(actual)];
    return !Number.isNaN(left) && left === right;
  }
  return false;
}

function canonicalJson(text: string): string | undefined {
  const sortKeys = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sortKeys)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .sort(([left], [right]) => (left < right ? -1 : 1))
              .map(([key, item]) => [key, sortKeys(item)]),
          )
        : value;
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    return undefined;
  }
}

/** Milliseconds since the epoch for both ISO 8601 and PostgreSQL's `2020-01-01 00:00:00+00`. */
function parseInstant(text: string): number {
  const iso = text
    .trim()
    .replace(' ', 'T')
    .replace(/([+-]\d{2})$/, '$1:00');
  return Date.parse(/(?:Z|[+-]\d{2}:\d{2})$/i.test(iso) || !iso.includes('T') ? iso : `${iso}Z`);
}

function normalizeSql(sql: string): string {
  return sql.replace(/\s+/g, ' ').trim().toLowerCase();
}

function describeDefault(value: ColumnDefault): string {
  switch (value.kind) {
    case 'none':
      return 'none';
    case 'any':
      return 'dbgenerated()';
    case 'now':
      return 'CURRENT_TIMESTAMP';
    case 'autoincrement':
      return 'autoincrement()';
    case 'expression':
      return value.sql;
    case 'value': {
      const items = value.values.map((literal) => (literal.quoted ? `'${literal.text.replaceAll("'", "''")}'` : literal.text));
      return value.isArray ? `ARRAY[${items.join(', ')}]` : (items[0] ?? '');
    }
  }
}

function comparePrimaryKeys(expected: TableShape, actual: TableShape): string[] {
  const table = expected.name;
  const expectedKey = expected.primaryKey;
  const actualKey = actual.primaryKey;
  if (!expectedKey && !actualKey) return [];
  if (!expectedKey) return [`table ${table}: database has primary key (${actualKey?.columns.join(', ')}), schema.prisma has none`];
  if (!actualKey) return [`table ${table}: expected primary key (${expectedKey.columns.join(', ')}), database has none`];
  const problems: string[] = [];
  if (expectedKey.columns.join('\n') !== actualKey.columns.join('\n')) {
    problems.push(
      `table ${table}: expected primary key (${expectedKey.columns.join(', ')}), database has (${actualKey.columns.join(', ')})`,
    );
  }
  if (expectedKey.name !== actualKey.name) {
    problems.push(`table ${table}: primary key is named "${actualKey.name}", expected "${expectedKey.name}"`);
  }
  return problems;
}

function describeIndex(table: string, index: IndexShape): string {
  return `${index.unique ? 'unique index' : 'index'} ${table}(${index.columns.join(', ')})`;
}

function indexKey(index: IndexShape): string {
  return `${index.unique}:${index.columns.join('\n')}`;
}

/** Matched by columns and uniqueness; names, methods, sort orders and conditions are then checked pairwise. */
function compareIndexes(expected: TableShape, actual: TableShape): string[] {
  const problems: string[] = [];
  const unmatched = [...actual.indexes];
  for (const index of expected.indexes) {
    const position = unmatched.findIndex((candidate) => indexKey(candidate) === indexKey(index));
    const what = describeIndex(expected.name, index);
    if (position < 0) {
      problems.push(`${what}: missing from the database (expected name "${index.name}")`);
      continue;
    }
    const [actualIndex] = unmatched.splice(position, 1);
    if (!actualIndex) continue;
    if (actualIndex.name !== index.name) {
      problems.push(`${what}: named "${actualIndex.name}" in the database, expected "${index.name}"`);
    }
    if (actualIndex.method !== index.method) {
      problems.push(`${what}: expected method ${index.method}, database has ${actualIndex.method}`);
    }
    if (actualIndex.descending.join() !== index.descending.join()) {
      const order = (descending: boolean[]) => descending.map((desc) => (desc ? 'DESC' : 'ASC')).join(', ');
      problems.push(`${what}: expected order (${order(index.descending)}), database has (${order(actualIndex.descending)})`);
    }
    if (actualIndex.predicate !== index.predicate) {
      problems.push(`${what}: expected condition ${index.predicate ?? 'none'}, database has ${actualIndex.predicate ?? 'none'}`);
    }
  }
  for (const index of unmatched) {
    problems.push(`${describeIndex(expected.name, index)}: exists in the database but not in schema.prisma (named "${index.name}")`);
  }
  return problems;
}

function describeForeignKey(table: string, key: ForeignKeyShape): string {
  return `foreign key ${table}(${key.columns.join(', ')}) → ${key.referencedTable}(${key.referencedColumns.join(', ')})`;
}

function foreignKeyAction(action: string): string {
  return action.replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toUpperCase();
}

/** Matched by columns and referenced columns; the referential actions are then checked pairwise. */
function compareForeignKeys(expected: TableShape, actual: TableShape): string[] {
  const problems: string[] = [];
  const unmatched = [...actual.foreignKeys];
  for (const key of expected.foreignKeys) {
    const what = describeForeignKey(expected.name, key);
    const position = unmatched.findIndex((candidate) => describeForeignKey(expected.name, candidate) === what);
    if (position < 0) {
      problems.push(`${what}: missing from the database`);
      continue;
    }
    const [actualKey] = unmatched.splice(position, 1);
    if (!actualKey) continue;
    if (actualKey.onDelete !== key.onDelete) {
      problems.push(
        `${what}: expected ON DELETE ${foreignKeyAction(key.onDelete)}, database has ON DELETE ${foreignKeyAction(actualKey.onDelete)}`,
      );
    }
    if (actualKey.onUpdate !== key.onUpdate) {
      problems.push(
        `${what}: expected ON UPDATE ${foreignKeyAction(key.onUpdate)}, database has ON UPDATE ${foreignKeyAction(actualKey.onUpdate)}`,
      );
    }
  }
  for (const key of unmatched) {
    problems.push(`${describeForeignKey(expected.name, key)}: exists in the database but not in schema.prisma`);
  }
  return problems;
}
