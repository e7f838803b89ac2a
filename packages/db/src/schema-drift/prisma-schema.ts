import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { getDMMF } from '@prisma/get-dmmf';
import { parseDatabaseDefault } from './database-default';
import type { ColumnDefault, ColumnShape, DatabaseShape, ForeignKeyShape, IndexShape, Literal, PrimaryKeyShape, TableShape } from './shape';

/**
 * The expected side: schema.prisma → DMMF → shape, as `prisma migrate dev` would create it for
 * PostgreSQL (Prisma's default type for each scalar, its default constraint names, nullable
 * scalar lists, and so on).
 */

type DmmfDocument = Exclude<ReturnType<typeof getDMMF>, { error: Error }>;
type Datamodel = DmmfDocument['datamodel'];
type Model = Datamodel['models'][number];
type Field = Model['fields'][number];
type FieldDefault = NonNullable<Field['default']>;

const POSTGRES_IDENTIFIER_LIMIT = 63;

/** What a schema says: its DMMF datamodel, and the conditions of its partial indexes by index name (partialIndexPredicates). */
export interface SchemaModel {
  datamodel: Datamodel;
  predicates: Map<string, string>;
}

export async function readSchemaModel(path: string): Promise<SchemaModel> {
  // Loaded on first use, so importing this module never requires the devDependency.
  const { getDMMF } = await import('@prisma/get-dmmf');
  const files = await readSchemaFiles(path);
  const result = getDMMF({ datamodel: files });
  if ('error' in result) {
    throw new Error(`Cannot read ${path}: ${result.reason} ${stripVTControlCharacters(result.error.message)}`);
  }
  const sources = typeof files === 'string' ? [files] : files.map(([, source]) => source);
  return { datamodel: result.datamodel, predicates: partialIndexPredicates(sources.join('\n')) };
}

/**
 * The conditions of partial indexes (`@@index([...], map: "name", where: raw("condition"))`, the
 * partialIndexes preview feature), by index name: the DMMF does not carry them, so they are read
 * from the schema's text (our own file, one index a line). The condition is compared with
 * PostgreSQL's `pg_get_expr` as it is, so the schema spells it that way. A partial index must be
 * named (`map`): the name is how the database's index is found.
 */
export function partialIndexPredicates(source: string): Map<string, string> {
  const predicates = new Map<string, string>();
  for (const line of source.split('\n')) {
    if (!/^\s*@@index\(.*\bwhere:/.test(line)) continue;
    const name = /\bmap:\s*"([^"]+)"/.exec(line)?.[1];
    const condition = /\bwhere:\s*raw\("((?:[^"\\]|\\.)*)"\)/.exec(line)?.[1];
    if (!name || condition === undefined) throw new Error(`A partial index needs map: "name" and where: raw("condition") on one line: ${line.trim()}`);
    predicates.set(name, condition.replace(/\\(.)/g, '$1'));
  }
  return predicates;
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

export function expectedFromDatamodel(datamodel: Datamodel, predicates: ReadonlyMap<string, string> = new Map()): DatabaseShape {
  const enums = new Map(
    datamodel.enums.map((enumType) => [
      enumType.dbName ?? enumType.name,
      enumType.values.map((value) => value.dbName ?? value.name),
    ]),
  );
  const models = new Map(datamodel.models.map((model) => [model.name, model]));
  const tables = new Map<string, TableShape>();
  for (const model of datamodel.models) {
    const table = expectedTable(model, datamodel, models, predicates);
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

function expectedTable(model: Model, datamodel: Datamodel, models: Map<string, Model>, predicates: ReadonlyMap<string, string>): TableShape {
  const columns = model.fields
    .filter((field) => field.kind === 'scalar' || field.kind === 'enum')
    .map((field) => expectedColumn(field, datamodel));
  const foreignKeys = model.fields
    .filter((field) => field.kind === 'object' && (field.relationFromFields?.length ?? 0) > 0)
    .map((field) => expectedForeignKey(model, field, models));
  return {
    name: tableName(model),
    columns: new Map(columns.map((column) => [column.name, column])),
    ...expectedKeys(model, datamodel, predicates),
    foreignKeys,
    partitioning: null,
  };
}

/** The primary key and the indexes (@id/@@id, @unique/@@unique, @@index) of one model. */
function expectedKeys(model: Model, datamodel: Datamodel, predicates: ReadonlyMap<string, string>): Pick<TableShape, 'primaryKey' | 'indexes'> {
  const table = tableName(model);
  let primaryKey: PrimaryKeyShape | null = null;
  const indexes: IndexShape[] = [];
  for (const index of datamodel.indexes.filter((candidate) => candidate.model === model.name)) {
    const columns = columnNamesOf(model, index.fields.map((field) => field.name));
    if (index.type === 'id') {
      primaryKey = { name: index.dbName ?? defaultConstraintName(table, [], '_pkey'), columns };
    } else if (index.type === 'unique' || index.type === 'normal') {
      const unique = index.type === 'unique';
      const name = index.dbName ?? defaultConstraintName(table, columns, unique ? '_key' : '_idx');
      indexes.push({
        name,
        columns,
        unique,
        method: (index.algorithm ?? 'BTree').toLowerCase(),
        descending: index.fields.map((field) => field.sortOrder === 'desc'),
        predicate: predicates.get(name) ?? null,
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
      partitioning: null,
    });
  }
  return tables;
}
