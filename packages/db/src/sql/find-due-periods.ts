import { poolOf, type DatabaseHandle } from '../client';

/** The (rule, period) pairs whose pending matches are due at `now`, longest due first, at most `limit`. */
export async function findDuePeriods(db: DatabaseHandle, now: Date, limit: number): Promise<Array<{ ruleId: string; periodKey: string }>> {
  const { rows } = await poolOf(db).query<{ rule_id: string; period_key: string }>(
    `SELECT rule_id, period_key FROM matches
      WHERE status = 'pending' AND due_at <= $1
      GROUP BY rule_id, period_key
      ORDER BY min(due_at)
      LIMIT $2`,
    [now, limit],
  );
  return rows.map((row) => ({ ruleId: row.rule_id, periodKey: row.period_key }));
}
