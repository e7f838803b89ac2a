import { periodKeys } from '@notify/core';
import { createDeliveries, lockRule, periodHasDeliveries, rekeyPendingMatches, withTransaction, type Transaction } from '@notify/db';
import type { PipelineContext } from '../context';

/**
 * The deliver stage: a (rule, period)'s pending matches become deliveries, one per member,
 * unique per (rule, member, period key). Two ways in: the deliver job of a period that fell due
 * (`deliverPeriod`: a digest period or an instant rule's burst, asked for by the schedule stage),
 * and `deliverInTransaction` for callers that made a fresh period key in their own transaction
 * (an instant rule's first match, an operator's flush).
 */

/**
 * Delivers the pending matches of (rule, period) pairs in the caller's transaction: one
 * statement for any number of pairs. The caller holds the rules' rows and makes sure no period
 * was delivered before under the same key (fresh keys: an instant rule's first match, a flush;
 * `deliverPeriod` re-keys late matches). Matches of a disabled rule or of a rule without members
 * are dropped; a member in their quiet hours at `now` has an instant or hourly batch without a
 * critical event held until they end (createDeliveries). Returns the ids of the deliveries to send once the transaction commits.
 */
export function deliverInTransaction(tx: Transaction, periods: ReadonlyArray<{ ruleId: string; periodKey: string }>, now: Date): Promise<string[]> {
  return createDeliveries(tx, periods, now);
}

/**
 * The deliver job: delivers a rule's pending matches of one period and asks for the deliveries
 * to be sent. Runs in one transaction with the rule's row locked, so concurrent deliver jobs of
 * a rule serialize. A period that already has deliveries (matches that arrived late) gets a
 * late-round period key of its own instead of a second e-mail under the same one.
 * Returns the ids of the deliveries it created.
 */
export async function deliverPeriod(ctx: PipelineContext, ruleId: string, periodKey: string): Promise<string[]> {
  const created = await withTransaction(ctx.db, async (tx) => {
    if (!(await lockRule(tx, ruleId))) return [];
    let key = periodKey;
    if (await periodHasDeliveries(tx, ruleId, periodKey)) {
      key = periodKeys.lateRound(periodKey);
      await rekeyPendingMatches(tx, ruleId, periodKey, key);
    }
    return deliverInTransaction(tx, [{ ruleId, periodKey: key }], ctx.now());
  });
  // If this fails the deliveries wait as pending; the reconciler asks again.
  await ctx.queues.requestSend(created);
  return created;
}
