import { releaseDeliveries, type ClaimedDelivery, type ClaimsWhenMade } from '@notify/db';
import type { PipelineContext } from '../context';
import { CLAIM_AHEAD, EVENTS_PER_MAIL } from './send-delivery';

/**
 * How many deliveries a statement about to make some may make claimed for this process's sender
 * (ClaimsWhenMade): as many as one claim statement takes
 * (CLAIM_AHEAD), and the sender has room for (none without one). A statement of hundreds would
 * claim what the sender then declines (two transactions at once see the same room) and gives back,
 * a write more each; those past it are claimed ahead of their turn as any list's.
 */
export function claimsForSender(ctx: PipelineContext): ClaimsWhenMade {
  return { claimUpTo: Math.min(ctx.sendHere?.room() ?? 0, CLAIM_AHEAD), eventLimit: EVENTS_PER_MAIL };
}

/**
 * Asks for the e-mails of deliveries just made: this process's sender takes what it can (SendHere),
 * the send queue the rest. `claimed`: those made claimed for this process's sender
 * (ClaimsWhenMade); any it declines is given back (pending) before the queue gets it,
 * as a claimed delivery would be skipped by a job's claim until the claim timeout. Should asking
 * fail (Redis away), the deliveries wait in PostgreSQL and the reconciler asks again; so does it
 * for any a process took and did not send (the process killed).
 */
export async function requestSend(ctx: PipelineContext, deliveryIds: readonly string[], madeClaimed: readonly ClaimedDelivery[] = []): Promise<void> {
  if (!deliveryIds.length) return;
  const claimed = madeClaimed.length ? new Map(madeClaimed.map((delivery) => [delivery.id, delivery])) : undefined;
  // The claimed ones first: what the sender has no room for is better one it would claim itself.
  const ordered = claimed ? [...deliveryIds.filter((id) => claimed.has(id)), ...deliveryIds.filter((id) => !claimed.has(id))] : deliveryIds;
  const declined = ctx.sendHere ? ctx.sendHere.take(ordered, claimed) : ordered;
  if (claimed) await releaseDeliveries(ctx.db, declined.filter((id) => claimed.has(id)));
  await ctx.queues.requestSend(declined);
}
