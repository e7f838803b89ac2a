import { clientOf, type Transaction } from '../client';

/** Which of `ids` name rules of the organization, in one query. */
export async function existingRuleIds(tx: Transaction, organizationId: string, ids: readonly string[]): Promise<string[]> {
  const { rows } = await clientOf(tx).query<{ id: string }>(
    'SELECT id FROM notification_rules WHERE organization_id = $1 AND id = ANY($2::uuid[])',
    [organizationId, ids],
  );
  return rows.map((row) => row.id);
}
