import { clientOf, type Transaction } from '../client';

/** Locks a rule's row for the transaction (work on one rule serializes); false when there is no such rule. */
export async function lockRule(tx: Transaction, ruleId: string): Promise<boolean> {
  const { rows } = await clientOf(tx).query('SELECT 1 FROM notification_rules WHERE id = $1 FOR UPDATE', [ruleId]);
  return rows.length > 0;
}
