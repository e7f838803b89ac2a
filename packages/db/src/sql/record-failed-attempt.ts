import { poolOf, type DatabaseHandle } from '../client';

/** Records a failed attempt: the delivery is failed when `final`, pending again (for a retry) otherwise. */
export async function recordFailedAttempt(db: DatabaseHandle, deliveryId: string, final: boolean, error: string): Promise<void> {
  await poolOf(db).query(`UPDATE deliveries SET status = $2, last_error = $3, updated_at = now() WHERE id = $1`, [deliveryId, final ? 'failed' : 'pending', error]);
}
