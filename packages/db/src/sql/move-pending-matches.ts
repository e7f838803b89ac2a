import { clientOf, type Transaction } from '../client';

/** Moves every pending match of a rule, whatever its period, to one period due at `dueAt`. Returns how many moved. */
export async function movePendingMatches(tx: Transaction, ruleId: string, periodKey: string, dueAt: Date): Promise<number> {
  const result = await clientOf(tx).query(`UPDATE matches SET period_key = $2, due_at = $3 WHERE rule_id = $1 AND status = 'pending'`, [ruleId, periodKey, dueAt]);
  return result.rowCount ?? 0;
}
