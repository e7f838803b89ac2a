import { clientOf, type Transaction } from '../client';

/**
 * Moves every pending match of a rule, whatever its period, to one period due at `dueAt`, and the
 * repeats recorded in those periods with them (the e-mail counts them). Returns how many pending moved.
 */
export async function movePendingMatches(tx: Transaction, ruleId: string, periodKey: string, dueAt: Date): Promise<number> {
  const result = await clientOf(tx).query(
    `WITH periods AS (SELECT DISTINCT period_key FROM matches WHERE rule_id = $1 AND status = 'pending'),
          repeats AS (UPDATE matches SET period_key = $2 WHERE rule_id = $1 AND status = 'repeat' AND period_key IN (SELECT period_key FROM periods))
     UPDATE matches SET period_key = $2, due_at = $3 WHERE rule_id = $1 AND status = 'pending'`,
    [ruleId, periodKey, dueAt],
  );
  return result.rowCount ?? 0;
}
