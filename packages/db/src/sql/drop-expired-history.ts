import { withTransaction, clientOf, quoteIdent, type DatabaseHandle } from '../client';
import { addMonths, HISTORY_TABLES, LOCK_HISTORY, monthSuffix, partitionMonth, type HistoryTable } from './includes/history-partitions';

export interface ExpiredHistory {
  /** Months dropped, as `YYYY-MM`. */
  dropped: string[];
  /** Months old enough to go but kept, each with what is still owed in it. */
  held: Array<{ month: string; owed: string[] }>;
}

/** How long the drop waits for the tables' locks before leaving the month to the next run. */
const LOCK_TIMEOUT = '5s';

/**
 * Drops each month of history that ended at or before `before` (the retention horizon), all three
 * tables' partitions of it together, by DROP TABLE: no row is read or deleted one by one. A month
 * that still holds something owed is kept whole until a later run: an event not matched yet, a
 * pending match (a digest period not due yet), or a delivery not sent yet whose events may lie in
 * it. The asset inventory (assets) keeps its own first and last seen, so it loses nothing.
 */
export async function dropExpiredHistory(db: DatabaseHandle, before: Date): Promise<ExpiredHistory> {
  const months = await expiredMonths(db, before);
  const result: ExpiredHistory = { dropped: [], held: [] };
  for (const month of months) {
    const label = monthSuffix(month).replace('_', '-');
    const owed = await withTransaction(db, async (tx): Promise<string[]> => {
      const client = clientOf(tx);
      await client.query(LOCK_HISTORY);
      await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      const parts = await existingPartitions(client, month);
      // Locked first, so nothing owed can arrive in them between the checks and the drop.
      if (parts.length) await client.query(`LOCK TABLE ${parts.map(quoteIdent).join(', ')} IN ACCESS EXCLUSIVE MODE`);
      const owed = await owedIn(client, month, parts);
      if (!owed.length && parts.length) await client.query(`DROP TABLE ${parts.map(quoteIdent).join(', ')}`);
      return owed;
    }).catch((error: unknown) => {
      // Queries on the tables outlasted the lock timeout: the next run tries again.
      if ((error as { code?: string }).code === '55P03') return ['tables busy'];
      throw error;
    });
    if (owed.length) result.held.push({ month: label, owed });
    else result.dropped.push(label);
  }
  return result;
}

type Client = ReturnType<typeof clientOf>;

async function expiredMonths(db: DatabaseHandle, before: Date): Promise<Date[]> {
  return withTransaction(db, async (tx) => {
    const { rows } = await clientOf(tx).query<{ parent: HistoryTable; name: string }>(
      `SELECT p.relname AS parent, c.relname AS name
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        WHERE i.inhparent = ANY (ARRAY[${HISTORY_TABLES.map((table) => `to_regclass('${table}')`).join(', ')}])`,
    );
    const months = new Map<number, Date>();
    for (const { parent, name } of rows) {
      const month = partitionMonth(parent, name);
      if (month && addMonths(month, 1).getTime() <= before.getTime()) months.set(month.getTime(), month);
    }
    return [...months.values()].sort((a, b) => a.getTime() - b.getTime());
  });
}

async function existingPartitions(client: Client, month: Date): Promise<string[]> {
  const names = HISTORY_TABLES.map((table) => `${table}_p${monthSuffix(month)}`);
  const { rows } = await client.query<{ name: string }>(`SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(quote_ident(name)) IS NOT NULL`, [names]);
  const present = new Set(rows.map((row) => row.name));
  return names.filter((name) => present.has(name));
}

async function owedIn(client: Client, month: Date, parts: string[]): Promise<string[]> {
  const events = parts.find((name) => name.startsWith('events_'));
  const matches = parts.find((name) => name.startsWith('matches_'));
  const { rows } = await client.query<{ unmatched: boolean; pending: boolean; unsent: boolean }>(
    `SELECT ${events ? `EXISTS (SELECT 1 FROM ${quoteIdent(events)} WHERE matched_at IS NULL)` : 'false'} AS unmatched,
            ${matches ? `EXISTS (SELECT 1 FROM ${quoteIdent(matches)} WHERE status = 'pending')` : 'false'} AS pending,
            EXISTS (SELECT 1 FROM deliveries WHERE status IN ('pending', 'sending')
                       AND (first_event_at IS NULL OR first_event_at < $1 OR created_at < $1)) AS unsent`,
    [addMonths(month, 1)],
  );
  const row = rows[0]!;
  return [
    ...(row.unmatched ? ['events not matched yet'] : []),
    ...(row.pending ? ['pending matches'] : []),
    ...(row.unsent ? ['deliveries not sent yet'] : []),
  ];
}
