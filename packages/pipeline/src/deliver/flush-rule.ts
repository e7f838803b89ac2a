import { NotFound, isUuid, periodKeys } from '@notify/core';
import { lockRules, movePendingMatches, withTransaction } from '@notify/db';
import type { PipelineContext } from '../context';
import { deliverInTransaction } from './deliver';

/**
 * An operator sends a rule's pending matches now, as one digest per member, whatever periods
 * they were waiting for. One transaction: the matches move to a flush period of their own and
 * become deliveries together, so the schedule stage never sees them half-way.
 */
export async function flushRule(ctx: PipelineContext, ruleId: string): Promise<{ matches: number; deliveries: number }> {
  if (!isUuid(ruleId)) throw new NotFound('Notification rule not found.');
  const now = ctx.now();
  const periodKey = periodKeys.flush(now);
  const { moved, deliveryIds } = await withTransaction(ctx.db, async (tx) => {
    if (!(await lockRules(tx, [ruleId])).size) throw new NotFound('Notification rule not found.');
    const moved = await movePendingMatches(tx, ruleId, periodKey, now);
    return { moved, deliveryIds: moved ? await deliverInTransaction(tx, [{ ruleId, periodKey }], now) : [] };
  });
  // Should this fail, the deliveries wait as pending: the reconciler asks again.
  await ctx.queues.requestSend(deliveryIds);
  return { matches: moved, deliveries: deliveryIds.length };
}
