import type { PipelineContext } from '../context';

/**
 * Asks for the e-mails of deliveries just made: this process's sender takes what it can (SendHere),
 * the send queue the rest. Should asking fail (Redis away), the deliveries wait as pending in
 * PostgreSQL and the reconciler asks again; so does it for any a process took and did not send
 * (the process killed).
 */
export async function requestSend(ctx: PipelineContext, deliveryIds: readonly string[]): Promise<void> {
  if (!deliveryIds.length) return;
  const declined = ctx.sendHere ? ctx.sendHere(deliveryIds) : deliveryIds;
  await ctx.queues.requestSend(declined);
}
