import { clientOf, type Transaction } from '../client';

/** Locks an organization's row for the transaction (FOR NO KEY UPDATE): writes that must take turns per organization queue on it. */
export async function lockOrganization(tx: Transaction, organizationId: string): Promise<void> {
  await clientOf(tx).query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);
}
