import { hotPoolOf, named, type DatabaseHandle } from '../client';

/** Records deliveries as sent, each under the Message-ID the server accepted: one statement for any number. */
export async function markDeliveriesSent(db: DatabaseHandle, sent: ReadonlyArray<{ deliveryId: string; messageId: string }>): Promise<void> {
  if (!sent.length) return;
  await hotPoolOf(db).query(named('mark-deliveries-sent',
    `UPDATE deliveries d SET status = 'sent', message_id = s.message_id, sent_at = now(), last_error = NULL, updated_at = now()
       FROM unnest($1::uuid[], $2::text[]) AS s(id, message_id)
      WHERE d.id = s.id`,
    [sent.map((row) => row.deliveryId), sent.map((row) => row.messageId)],
  ));
}
