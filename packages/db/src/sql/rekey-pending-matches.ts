import { clientOf, type Transaction } from '../client';

/** Moves a rule's pending matches of one period to another period key (their due time unchanged). */
export async function rekeyPendingMatches(tx: Transaction, ruleId: string, fromKey: string, toKey: string): Promise<void> {
  await clientOf(tx).query(`UPDATE matches SET period_key = $3 WHERE rule_id = $1 AND period_key = $2 AND status = 'pending'`, [ruleId, fromKey, toKey]);
}
