import { clientOf, type Transaction } from '../client';

/** How many of the organization's silences have not expired at `now` (pending ones included). */
export async function countUnexpiredSilences(tx: Transaction, organizationId: string, now: Date): Promise<number> {
  const { rows } = await clientOf(tx).query<{ n: number }>(
    'SELECT count(*)::int AS n FROM notification_silences WHERE organization_id = $1 AND ends_at > $2',
    [organizationId, now],
  );
  return rows[0]!.n;
}
