import { poolOf, type DatabaseHandle } from '../client';

/** Records a delivery as sent, under the Message-ID the server accepted. */
export async function markDeliverySent(db: DatabaseHandle, deliveryId: string, messageId: string): Promise<void> {
  await poolOf(db).query(
    `UPDATE deliveries SET status = 'sent', message_id = $2, sent_at = now(), last_error = NULL, updated_at = now() WHERE id = $1`,
    [deliveryId, messageId],
  );
}
