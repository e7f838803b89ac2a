import { clientOf, named, type Transaction } from '../client';

/** Locks a rule's row for the transaction (work on one rule serializes); false when there is no such rule. */
export async function lockRule(tx: Transaction, ruleId: string): Promise<boolean> {
  const { rows } = await clientOf(tx).query(named('lock-rule', 'SELECT 1 FROM notification_rules WHERE id = $1 FOR UPDATE', [ruleId]));
  return rows.length > 0;
}

/**
 * Locks rules' rows for the transaction, in id order (two transactions locking overlapping sets
 * cannot deadlock on them). Returns the ids of the rules that exist.
 */
export async function lockRules(tx: Transaction, ruleIds: readonly string[]): Promise<Set<string>> {
  if (!ruleIds.length) return new Set();
  const { rows } = await clientOf(tx).query<{ id: string }>(named('lock-rules',
    'SELECT id::text AS id FROM notification_rules WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE',
    [[...new Set(ruleIds)]],
  ));
  return new Set(rows.map((row) => row.id));
}
