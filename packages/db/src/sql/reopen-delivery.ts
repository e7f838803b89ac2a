import { poolOf, type DatabaseHandle } from '../client';

/** Puts a delivery back to pending with its last error cleared, for the next claim. */
export async function reopenDelivery(db: DatabaseHandle, deliveryId: string): Promise<void> {
  await poolOf(db).query(`UPDATE deliveries SET status = 'pending', last_error = NULL, updated_at = now() WHERE id = $1`, [deliveryId]);
}
