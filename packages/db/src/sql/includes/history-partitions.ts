/**
 * includes/history-partitions — the partitioned history: events, matches and deliveries, each
 * partitioned by month (UTC) of a server-set time, with a DEFAULT partition that takes what no
 * month does (see the partitioned_history migration). One home for what maintenance, retention
 * and the schema drift check share.
 *
 * Takes:   nothing of a statement: LOCK_HISTORY is a statement of its own, run in the caller's transaction.
 * Returns: HISTORY_TABLES, HISTORY_PARTITION_KEYS, HISTORY_PARTITION_UNIQUE (the tables, their keys
 *          and per-partition unique indexes); LOCK_HISTORY (an advisory lock, no rows); month helpers
 *          for partition names `<table>_pYYYY_MM`.
 * Used by: ensure-history-partitions, drop-expired-history, schema-drift.
 */

/** The partitioned tables, in the order their months are dropped (matches before their events). */
export const HISTORY_TABLES = ['matches', 'events', 'deliveries'] as const;
export type HistoryTable = (typeof HISTORY_TABLES)[number];

/** The partition key of each table: events by arrival, matches with their event, deliveries by creation. */
export const HISTORY_PARTITION_KEYS: Readonly<Record<HistoryTable, string>> = {
  events: 'received_at',
  matches: 'event_received_at',
  deliveries: 'created_at',
};

/**
 * The unique index each month partition has of its own, where the parent cannot hold it (its
 * columns do not include the partition key). The SQL function notify_history_partition_key
 * creates them; the schema drift check verifies every partition has its table's.
 */
export const HISTORY_PARTITION_UNIQUE: Readonly<Partial<Record<HistoryTable, readonly string[]>>> = {
  events: ['organization_id', 'id'],
  deliveries: ['rule_id', 'team_member_id', 'period_key'],
};

/** Serializes maintenance of one schema's history among processes (a transaction-scoped advisory lock). */
export const LOCK_HISTORY = `SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':history-partitions'))`;

/** The first instant of the month (UTC) holding `at`. */
export function monthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

export function addMonths(month: Date, months: number): Date {
  return new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + months, 1));
}

/** A month as partitions name it: `2026_11`. */
export function monthSuffix(month: Date): string {
  return `${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The month of a partition name `<table>_pYYYY_MM`, or null for the default partition and anything else. */
export function partitionMonth(table: HistoryTable, name: string): Date | null {
  const match = new RegExp(`^${table}_p(\\d{4})_(\\d{2})$`).exec(name);
  return match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)) : null;
}
