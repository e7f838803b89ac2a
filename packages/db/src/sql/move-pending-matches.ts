import { clientOf, named, type Transaction } from '../client';

/**
 * Moves every pending match of a rule, whatever its period, to one period due at `dueAt`, and the
 * repeats recorded in those periods with them (the e-mail counts them). Returns how many events' pending
 * matches moved (a digest match recorded for several member zones counts once).
 */
export async function movePendingMatches(tx: Transaction, ruleId: string, periodKey: string, dueAt: Date): Promise<number> {
  const result = await clientOf(tx).query<{ n: number }>(named('move-pending-matches',
    `WITH periods AS (SELECT DISTINCT period_key FROM matches WHERE rule_id = $1 AND status = 'pending'),
          repeats AS (UPDATE matches SET period_key = $2 WHERE rule_id = $1 AND status = 'repeat' AND period_key IN (SELECT period_key FROM periods)),
          moved AS (UPDATE matches SET period_key = $2, due_at = $3 WHERE rule_id = $1 AND status = 'pending' RETURNING organization_id, event_id)
     SELECT count(DISTINCT (organization_id, event_id))::int AS n FROM moved`,
    [ruleId, periodKey, dueAt],
  ));
  return result.rows[0]?.n ?? 0;
}
