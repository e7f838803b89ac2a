/**
 * The plain shape both sides are reduced to (tables, columns, keys, indexes, foreign keys, enums),
 * so the comparison never needs to know where a shape came from.
 */

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
  /** A partitioned table's key and partitions; null for a plain table. */
  partitioning: PartitioningShape | null;
}

/**
 * Prisma does not model partitions: the expected side comes from the project's own list of
 * partitioned tables (HISTORY_PARTITION_KEYS), with no partitions named; the actual side lists
 * every partition with its own unique indexes, each of which must carry `partitionUnique`.
 */
export interface PartitioningShape {
  /** `range`, `list` or `hash`. */
  method: string;
  columns: string[];
  /** The unique index every partition must have of its own (expected side), if any. */
  partitionUnique: readonly string[] | null;
  partitions: Array<{ name: string; uniqueIndexes: string[][] }>;
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
