import { poolOf, type DatabaseHandle } from '../client';

/** Records a delivery as cancelled (it will not be sent), with the reason. */
export async function cancelDelivery(db: DatabaseHandle, deliveryId: string, reason: string): Promise<void> {
  await poolOf(db).query(`UPDATE deliveries SET status = 'cancelled', last_error = $2, updated_at = now() WHERE id = $1`, [deliveryId, reason]);
}
