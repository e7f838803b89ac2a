import { NotFound, isUuid, periodKeys } from '@notify/core';
import { flushDeliveries, lockRules, withTransaction } from '@notify/db';
import { Batcher } from '../batcher';
import type { PipelineContext } from '../context';
import { claimsForSender, requestSend } from '../send/request-send';

export interface FlushResult {
  /** Events whose pending matches were sent now. */
  matches: number;
  /** E-mails made of them, one per member. */
  deliveries: number;
}

/** A rule's part of a shared flush: undefined when the rule does not exist. */
type FlushOutcome = (FlushResult & { sendError?: unknown }) | undefined;

/** The most rules one shared flush transaction takes. */
const FLUSH_BATCH_RULES = 200;

/**
 * How long a flush waits for others to share its transaction. A flush statement costs PostgreSQL
 * about 0.45 ms whatever its size (its kept plan opens every month's partition of matches, events
 * and deliveries) and 0.22 ms a rule of 20 matches (a quiet machine; about twice that on a busy
 * one), so flushes that come together should share one. But each caller waits for its flush's
 * answer, so the wait is added to every flush: in the digests part of `npm run bench:pipeline` (10
 * callers, alternated runs), 5 ms made transactions of ~10 rules and the part 0.56 / 0.50 / 0.58x
 * of the raw rate; 1 ms, ~6 rules, the same CPU an e-mail and 0.63 / 0.61 / 0.67x (2 ms, or a wait
 * that ends 1 ms after the last call, the same); none, ~3 rules, 0.54–0.59x and a third more of
 * PostgreSQL's CPU an e-mail.
 */
const FLUSH_LINGER_MS = 1;

const flushBatches = new WeakMap<PipelineContext, Batcher<string, FlushOutcome>>();

/**
 * Flushes of the same moment share a transaction (Batcher, group commit): an operator flushing the
 * rules of a whole organization, one request each, costs a few transactions rather than five round
 * trips a rule (measured in the digests part of `npm run bench:pipeline`). Two at a time, so one huge
 * flush does not hold up the others, each waiting a moment for company (FLUSH_LINGER_MS).
 */
function flushBatcher(ctx: PipelineContext): Batcher<string, FlushOutcome> {
  const known = flushBatches.get(ctx);
  if (known) return known;
  const batcher = new Batcher<string, FlushOutcome>((ruleIds) => flushRules(ctx, ruleIds), { maxBatch: FLUSH_BATCH_RULES, concurrency: 2, lingerMs: FLUSH_LINGER_MS });
  flushBatches.set(ctx, batcher);
  return batcher;
}

/**
 * One transaction for any number of rules: their rows locked, then one statement (flushDeliveries)
 * moves every pending match of each to a flush period of its own and makes them deliveries, so
 * the schedule stage never sees them half-way. A rule asked for twice is flushed once: the second
 * asker finds nothing left, as it would after the first.
 */
async function flushRules(ctx: PipelineContext, ruleIds: readonly string[]): Promise<FlushOutcome[]> {
  const now = ctx.now();
  const periodKey = periodKeys.flush(now);
  // Both statements find their rows by rule id. Left to choose, PostgreSQL planned the flush
  // statement afresh on every call (2.6 ms each, more than running it), the plan for a call's few
  // rules always looking cheaper than one kept for any.
  // The deliveries this process sends are made claimed for its sender (claimsForSender).
  const claims = claimsForSender(ctx);
  const { found, events, deliveries, claimed } = await withTransaction(ctx.db, async (tx) => {
    const found = await lockRules(tx, ruleIds);
    return { found, ...(await flushDeliveries(tx, [...found], periodKey, now, claims)) };
  }, { genericPlans: true });
  // Should this fail, the deliveries wait as pending (the reconciler asks again); each flush of the
  // batch reports it, as it would alone.
  const sendError = await requestSend(ctx, deliveries.map((delivery) => delivery.id), claimed).then(
    () => undefined,
    (error: unknown) => error ?? new Error('send request failed'),
  );
  const perRule = new Map<string, number>();
  for (const delivery of deliveries) perRule.set(delivery.ruleId, (perRule.get(delivery.ruleId) ?? 0) + 1);
  const answered = new Set<string>();
  return ruleIds.map((ruleId) => {
    if (!found.has(ruleId)) return undefined;
    const first = !answered.has(ruleId);
    answered.add(ruleId);
    return { matches: first ? (events.get(ruleId) ?? 0) : 0, deliveries: first ? (perRule.get(ruleId) ?? 0) : 0, sendError };
  });
}

/**
 * An operator sends a rule's pending matches now, as one digest per member, whatever periods they
 * were waiting for (see flushRules; concurrent flushes share its transaction).
 */
export async function flushRule(ctx: PipelineContext, ruleId: string): Promise<FlushResult> {
  if (!isUuid(ruleId)) throw new NotFound('Notification rule not found.');
  // As the database writes a uuid as text, so the rule is known by the id it locked.
  const outcome = await flushBatcher(ctx).submit(ruleId.toLowerCase());
  if (!outcome) throw new NotFound('Notification rule not found.');
  if (outcome.sendError !== undefined) throw outcome.sendError;
  return { matches: outcome.matches, deliveries: outcome.deliveries };
}
