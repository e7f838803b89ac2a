import { poolOf, type DatabaseHandle } from '../client';

/** Gives a claimed delivery back (sending → pending) with its attempt uncounted: nothing was sent. */
export async function releaseDelivery(db: DatabaseHandle, deliveryId: string): Promise<void> {
  await releaseDeliveries(db, [deliveryId]);
}

/** Gives claimed deliveries back (sending → pending), each with its attempt uncounted, in one statement. */
export async function releaseDeliveries(db: DatabaseHandle, deliveryIds: readonly string[]): Promise<void> {
  if (!deliveryIds.length) return;
  await poolOf(db).query(`UPDATE deliveries SET status = 'pending', attempts = attempts - 1, updated_at = now() WHERE id = ANY($1::uuid[]) AND status = 'sending'`, [deliveryIds]);
}
