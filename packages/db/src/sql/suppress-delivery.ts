import { poolOf, type DatabaseHandle } from '../client';

/** Records a claimed delivery as suppressed: its member's address bounces, so nothing was sent. */
export async function suppressDelivery(db: DatabaseHandle, deliveryId: string): Promise<void> {
  await poolOf(db).query(`UPDATE deliveries SET status = 'suppressed', updated_at = now() WHERE id = $1`, [deliveryId]);
}
