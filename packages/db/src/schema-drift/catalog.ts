import pg from 'pg';
import { quoteIdent } from '../client';
import { parseDatabaseDefault } from './database-default';
import type { DatabaseShape, TableShape } from './shape';

/** The actual side: a migrated schema's pg_catalog → shape. */

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
    await readPartitioning(client, oids, tables);
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
      .map((row) => [row.oid, { name: row.name, columns: new Map(), primaryKey: null, indexes: [], foreignKeys: [], partitioning: null }]),
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

const PARTITION_METHODS: Record<string, string> = { r: 'range', l: 'list', h: 'hash' };

/** Partitioned tables: their key, and each partition with the unique indexes it has of its own. */
async function readPartitioning(client: pg.Client, oids: string[], tables: Map<string, TableShape>): Promise<void> {
  const { rows } = await client.query<{ table_oid: string; method: string; columns: string[] }>(
    `SELECT p.partrelid::text AS table_oid, p.partstrat AS method,
            ARRAY(SELECT a.attname::text FROM unnest(p.partattrs::int2[]) WITH ORDINALITY k(attnum, n)
                    JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = k.attnum ORDER BY k.n) AS columns
       FROM pg_partitioned_table p WHERE p.partrelid = ANY($1::oid[])`,
    [oids],
  );
  for (const row of rows) {
    const table = tables.get(row.table_oid);
    if (table) table.partitioning = { method: PARTITION_METHODS[row.method] ?? row.method, columns: row.columns, partitionUnique: null, partitions: [] };
  }
  const { rows: partitions } = await client.query<{ table_oid: string; name: string; unique_indexes: string | null }>(
    `SELECT i.inhparent::text AS table_oid, c.relname AS name,
            (SELECT json_agg(ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, n)
                                     JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum ORDER BY k.n))::text
               FROM pg_index x WHERE x.indrelid = c.oid AND x.indisunique) AS unique_indexes
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = ANY($1::oid[])
      ORDER BY c.relname`,
    [oids],
  );
  for (const row of partitions) {
    tables.get(row.table_oid)?.partitioning?.partitions.push({ name: row.name, uniqueIndexes: row.unique_indexes ? (JSON.parse(row.unique_indexes) as string[][]) : [] });
  }
}
