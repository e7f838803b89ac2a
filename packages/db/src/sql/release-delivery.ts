import { poolOf, type DatabaseHandle } from '../client';

/** Gives a claimed delivery back (sending → pending) with its attempt uncounted: nothing was sent. */
export async function releaseDelivery(db: DatabaseHandle, deliveryId: string): Promise<void> {
  await poolOf(db).query(`UPDATE deliveries SET status = 'pending', attempts = attempts - 1, updated_at = now() WHERE id = $1 AND status = 'sending'`, [deliveryId]);
}
