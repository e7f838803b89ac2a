import { clientOf, type Transaction } from '../client';

/**
 * Adds to each silence's count of matches held back, in the transaction that recorded them. In
 * id order, so concurrent match jobs lock the silences in the same order.
 */
export async function countSilenced(tx: Transaction, counts: ReadonlyMap<string, number>): Promise<void> {
  if (!counts.size) return;
  const ids = [...counts.keys()].sort();
  const client = clientOf(tx);
  await client.query('SELECT 1 FROM notification_silences WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE', [ids]);
  await client.query(
    `UPDATE notification_silences s SET silenced_count = s.silenced_count + c.n
       FROM unnest($1::uuid[], $2::int[]) AS c(id, n)
      WHERE s.id = c.id`,
    [ids, ids.map((id) => counts.get(id)!)],
  );
}
