import { poolOf, type DatabaseHandle } from '../client';

/** The most matches a call reads per period it may return: a call stops reading there. */
export const DUE_MATCHES_READ_PER_PERIOD = 10;

/**
 * The (rule, period) pairs whose pending matches are due at `now`, longest due first, at most
 * `limit`. It reads the due matches in order of due time and no further than `limit` times
 * DUE_MATCHES_READ_PER_PERIOD of them, rather than grouping every due match on every tick, which
 * costs in proportion to the backlog (measured in commit a14bab5): a tick costs the same whatever
 * the backlog. A pair's first match read is its earliest, so the
 * order holds; periods of many matches make a call return fewer pairs (one at least while any is
 * due), and the next ticks the rest.
 */
export async function findDuePeriods(db: DatabaseHandle, now: Date, limit: number): Promise<Array<{ ruleId: string; periodKey: string }>> {
  const { rows } = await poolOf(db).query<{ rule_id: string; period_key: string }>(
    `SELECT rule_id, period_key
       FROM (SELECT rule_id, period_key, due_at FROM matches
              WHERE status = 'pending' AND due_at <= $1
              ORDER BY due_at
              LIMIT $3) due
      GROUP BY rule_id, period_key
      ORDER BY min(due_at)
      LIMIT $2`,
    [now, limit, limit * DUE_MATCHES_READ_PER_PERIOD],
  );
  return rows.map((row) => ({ ruleId: row.rule_id, periodKey: row.period_key }));
}
