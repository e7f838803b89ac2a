import { clientOf, named, type Transaction } from '../client';

/**
 * Locks rules' rows for the transaction (work on a rule serializes), in id order (two
 * transactions locking overlapping sets cannot deadlock on them). Returns the ids of the rules
 * that exist.
 */
export async function lockRules(tx: Transaction, ruleIds: readonly string[]): Promise<Set<string>> {
  if (!ruleIds.length) return new Set();
  const { rows } = await clientOf(tx).query<{ id: string }>(named('lock-rules',
    'SELECT id::text AS id FROM notification_rules WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE',
    [[...new Set(ruleIds)]],
  ));
  return new Set(rows.map((row) => row.id));
}
