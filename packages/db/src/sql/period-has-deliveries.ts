import { clientOf, type Transaction } from '../client';

/** Whether a rule's period was delivered before (has deliveries under this period key). */
export async function periodHasDeliveries(tx: Transaction, ruleId: string, periodKey: string): Promise<boolean> {
  const { rows } = await clientOf(tx).query('SELECT 1 FROM deliveries WHERE rule_id = $1 AND period_key = $2 LIMIT 1', [ruleId, periodKey]);
  return rows.length > 0;
}
