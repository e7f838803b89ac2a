import { poolOf, type DatabaseHandle } from '../client';

/** Ids of deliveries pending or being sent, untouched since `before`, oldest first, at most `limit`. */
export async function findUnsentDeliveries(db: DatabaseHandle, before: Date, limit: number): Promise<string[]> {
  const { rows } = await poolOf(db).query<{ id: string }>(
    `SELECT id FROM deliveries WHERE status IN ('pending', 'sending') AND updated_at <= $1 ORDER BY updated_at LIMIT $2`,
    [before, limit],
  );
  return rows.map((row) => row.id);
}
