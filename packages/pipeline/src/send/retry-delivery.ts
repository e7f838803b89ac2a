import { Conflict, NotFound, isUuid } from '@notify/core';
import { findDeliveryStatus, reopenDelivery } from '@notify/db';
import type { PipelineContext } from '../context';

/** An operator sends a failed (or cancelled) delivery again. */
export async function retryDelivery(ctx: PipelineContext, deliveryId: string): Promise<void> {
  if (!isUuid(deliveryId)) throw new NotFound('Delivery not found.');
  const status = await findDeliveryStatus(ctx.db, deliveryId);
  if (!status) throw new NotFound('Delivery not found.');
  if (status === 'sent') throw new Conflict('This delivery was sent already.');
  if (status === 'pending' || status === 'sending') throw new Conflict('This delivery is already on its way.');
  await reopenDelivery(ctx.db, deliveryId);
  // The failed job keeps its id for a while: it must not be taken for this new request.
  await ctx.queues.requestSend([deliveryId], { replaceFinished: true });
}
