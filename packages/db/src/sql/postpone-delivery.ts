import { poolOf, type DatabaseHandle } from '../client';

/** Puts a delivery back to pending with its attempt uncounted and the error kept: the server could not be reached. */
export async function postponeDelivery(db: DatabaseHandle, deliveryId: string, error: string): Promise<void> {
  await poolOf(db).query(`UPDATE deliveries SET status = 'pending', attempts = attempts - 1, last_error = $2, updated_at = now() WHERE id = $1`, [deliveryId, error]);
}
