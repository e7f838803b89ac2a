import { poolOf, type DatabaseHandle } from '../client';

/**
 * Puts a failed or cancelled delivery back to pending, its last error cleared, for the next claim.
 * The status is checked in the same statement, so a delivery a mailer is sending meanwhile is left
 * alone. False when nothing was reopened (no such delivery, or not failed or cancelled).
 */
export async function reopenDelivery(db: DatabaseHandle, deliveryId: string): Promise<boolean> {
  const { rowCount } = await poolOf(db).query(
    `UPDATE deliveries SET status = 'pending', last_error = NULL, updated_at = now()
      WHERE id = $1 AND status IN ('failed', 'cancelled')`,
    [deliveryId],
  );
  return rowCount === 1;
}
