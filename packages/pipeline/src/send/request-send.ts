import { releaseDeliveries, type ClaimedDelivery } from '@notify/db';
import type { PipelineContext } from '../context';

/**
 * Asks for the e-mails of deliveries just made: this process's sender takes what it can (SendHere),
 * the send queue the rest. `claimed`: those made claimed for this process's sender
 * (RecordMatchesOptions.claimUpTo); any it declines is given back (pending) before the queue gets it,
 * as a claimed delivery would be skipped by a job's claim until the claim timeout. Should asking
 * fail (Redis away), the deliveries wait in PostgreSQL and the reconciler asks again; so does it
 * for any a process took and did not send (the process killed).
 */
export async function requestSend(ctx: PipelineContext, deliveryIds: readonly string[], claimed?: ReadonlyMap<string, ClaimedDelivery>): Promise<void> {
  if (!deliveryIds.length) return;
  // The claimed ones first: what the sender has no room for is better one it would claim itself.
  const ordered = claimed?.size ? [...deliveryIds.filter((id) => claimed.has(id)), ...deliveryIds.filter((id) => !claimed.has(id))] : deliveryIds;
  const declined = ctx.sendHere ? ctx.sendHere.take(ordered, claimed) : ordered;
  if (claimed?.size) await releaseDeliveries(ctx.db, declined.filter((id) => claimed.has(id)));
  await ctx.queues.requestSend(declined);
}
