import { periodKeys } from '@notify/core';
import { createDeliveries, lockRules, periodsWithDeliveries, rekeyPendingMatches, withTransaction } from '@notify/db';
import type { PipelineContext } from '../context';
import { claimsForSender, requestSend } from '../send/request-send';

/**
 * The deliver stage: a (rule, period)'s pending matches become deliveries, one per member,
 * unique per (rule, member, period key), by the deliver job of a period that fell due
 * (`deliverPeriods`: a digest period or an instant rule's burst, asked for by the schedule stage).
 * An instant rule's first match is delivered by the statement that records it (recordMatches),
 * an operator's flush by its own (flushDeliveries); all three share createDeliveries' CTEs.
 */

/**
 * The deliver job: delivers rules' pending matches of their periods and asks for the deliveries
 * to be sent, for any number of (rule, period) pairs in one transaction (the deliver jobs a
 * process runs at once share theirs, see the deliver processor). The rules' rows are locked, so
 * work on a rule serializes with concurrent deliver jobs, flushes and matches. A period that already has
 * deliveries (matches that arrived late) gets a late-round period key of its own instead of a
 * second e-mail under the same one. Pairs of rules that no longer exist deliver nothing.
 * Returns the ids of the deliveries it created.
 */
export async function deliverPeriods(ctx: PipelineContext, periods: ReadonlyArray<{ ruleId: string; periodKey: string }>): Promise<string[]> {
  const unique = [...new Map(periods.map((period) => [`${period.ruleId}|${period.periodKey}`, period])).values()];
  if (!unique.length) return [];
  const claims = claimsForSender(ctx);
  const { deliveries, claimed } = await withTransaction(ctx.db, async (tx) => {
    const rules = await lockRules(tx, unique.map((period) => period.ruleId));
    const wanted = unique.filter((period) => rules.has(period.ruleId));
    const delivered = await periodsWithDeliveries(tx, wanted);
    const keyed = wanted.map((period) =>
      delivered.has(`${period.ruleId}|${period.periodKey}`) ? { ...period, lateKey: periodKeys.lateRound(period.periodKey) } : period,
    );
    await rekeyPendingMatches(tx, keyed.flatMap((period) => ('lateKey' in period ? [{ ruleId: period.ruleId, fromKey: period.periodKey, toKey: period.lateKey }] : [])));
    // Matches of a disabled rule or of a rule without members are dropped; a member in their quiet
    // hours has an instant or hourly batch without a critical event held until they end.
    return createDeliveries(tx, keyed.map((period) => ({ ruleId: period.ruleId, periodKey: 'lateKey' in period ? period.lateKey : period.periodKey })), ctx.now(), claims);
  });
  const created = deliveries.map((delivery) => delivery.id);
  // If this fails the deliveries wait as pending; the reconciler asks again.
  await requestSend(ctx, created, claimed);
  return created;
}
