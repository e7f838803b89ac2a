import { Conflict, NotFound, isUuid } from '@notify/core';
import { findDeliveryStatus, reopenDelivery } from '@notify/db';
import type { PipelineResources } from '../resources';

/** An operator sends a failed (or cancelled) delivery again. */
export async function retryDelivery(ctx: PipelineResources, deliveryId: string): Promise<void> {
  if (!isUuid(deliveryId)) throw new NotFound('Delivery not found.');
  if (!(await reopenDelivery(ctx.db, deliveryId))) {
    // Not reopened: say why.
    const status = await findDeliveryStatus(ctx.db, deliveryId);
    if (!status) throw new NotFound('Delivery not found.');
    throw new Conflict(status === 'sent' ? 'This delivery was sent already.' : 'This delivery is already on its way.');
  }
  // The failed job keeps its id for a while: it must not be taken for this new request.
  await ctx.queues.requestSend([deliveryId], { replaceFinished: true });
}
