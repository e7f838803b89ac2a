import { withTransaction, clientOf, type DatabaseHandle } from '../client';
import { addMonths, HISTORY_TABLES, LOCK_HISTORY, monthStart, monthSuffix } from './includes/history-partitions';

/**
 * Creates the month partitions of the history tables from the month of `now` through
 * `monthsAhead` months later, those that do not exist yet; rows the DEFAULT partition had to take
 * for such a month (maintenance was down) move into it. Safe to run from several processes at
 * once. Returns the partitions it created.
 */
export async function ensureHistoryPartitions(db: DatabaseHandle, now: Date, monthsAhead: number): Promise<string[]> {
  return withTransaction(db, async (tx) => {
    const client = clientOf(tx);
    await client.query(LOCK_HISTORY);
    const created: string[] = [];
    const first = monthStart(now);
    for (let i = 0; i <= monthsAhead; i++) {
      const month = addMonths(first, i);
      for (const table of HISTORY_TABLES) {
        const { rows } = await client.query<{ created: boolean }>('SELECT notify_ensure_history_partition($1, $2::date) AS created', [
          table,
          month.toISOString().slice(0, 10),
        ]);
        if (rows[0]?.created) created.push(`${table}_p${monthSuffix(month)}`);
      }
    }
    return created;
  });
}
