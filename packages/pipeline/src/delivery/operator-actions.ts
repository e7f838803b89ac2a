import { NotFound, Conflict, isUuid } from '@notify/core';
import { withTransaction } from '@notify/db';
import type { PipelineContext } from '../context';
import { deliverNow } from './deliver-now';

/**
 * Sends a rule's pending matches now, as one digest per member, whatever periods
 * they were waiting for. One transaction: the matches move to a period of their
 * own and become deliveries together, so the scheduler never sees them half-way.
 */
export async function flushRule(ctx: PipelineContext, ruleId: string): Promise<{ matches: number; deliveries: number }> {
  if (!isUuid(ruleId)) throw new NotFound('Notification rule not found.');
  const now = ctx.now();
  const periodKey = `f${now.getTime()}`;
  const { moved, deliveryIds } = await withTransaction(ctx.db.pool, async (client) => {
    const { rows } = await client.query('SELECT 1 FROM notification_rules WHERE id = $1 FOR UPDATE', [ruleId]);
    if (!rows.length) throw new NotFound('Notification rule not found.');
    const result = await client.query(`UPDATE matches SET period_key = $2, due_at = $3 WHERE rule_id = $1 AND status = 'pending'`, [ruleId, periodKey, now]);
    const moved = result.rowCount ?? 0;
    return { moved, deliveryIds: moved ? await deliverNow(client, [{ ruleId, periodKey }]) : [] };
  });
  // Should this fail, the deliveries wait as pending: the reconciler asks again.
  await ctx.queues.requestMail(deliveryIds);
  return { matches: moved, deliveries: deliveryIds.length };
}

/** An operator sends a failed (or cancelled) delivery again. */
export async function retryDelivery(ctx: PipelineContext, deliveryId: string): Promise<void> {
  if (!isUuid(deliveryId)) throw new NotFound('Delivery not found.');
  const { rows } = await ctx.db.pool.query<{ status: string }>('SELECT status FROM deliveries WHERE id = $1', [deliveryId]);
  const delivery = rows[0];
  if (!delivery) throw new NotFound('Delivery not found.');
  if (delivery.status === 'sent') throw new Conflict('This delivery was sent already.');
  if (delivery.status === 'pending' || delivery.status === 'sending') throw new Conflict('This delivery is already on its way.');
  await ctx.db.pool.query(`UPDATE deliveries SET status = 'pending', last_error = NULL, updated_at = now() WHERE id = $1`, [deliveryId]);
  // The failed job keeps its id for a while: it must not be taken for this new request.
  await ctx.queues.requestMail([deliveryId], { replaceFinished: true });
}
