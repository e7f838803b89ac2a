import { NotFound, isUuid, periodKeys } from '@notify/core';
import { createDeliveries, flushDeliveries, lockRules, periodsWithDeliveries, rekeyPendingMatches, withTransaction } from '@notify/db';
import { Batcher } from '../batcher';
import type { PipelineResources } from '../resources';
import type { ToSend } from '../hand-offs/to-send';

/** A (rule, period) whose pending matches are due. */
export interface DuePeriod {
  ruleId: string;
  periodKey: string;
}

export interface FlushResult {
  /** Events whose pending matches were sent now. */
  matches: number;
  /** E-mails made of them, one per member. */
  deliveries: number;
}

/** A rule's part of a shared flush: undefined when the rule does not exist. */
type FlushOutcome = (FlushResult & { sendError?: unknown }) | undefined;

/** The most (rule, period) pairs one shared deliver transaction takes. */
const DELIVER_BATCH_PERIODS = 200;

/** The most rules one shared flush transaction takes. */
const FLUSH_BATCH_RULES = 200;

/**
 * How long a flush waits for others to share its transaction. A flush statement costs PostgreSQL a
 * fixed part whatever its size (its kept plan opens every month's partition of matches, events and
 * deliveries) and a part per rule, so flushes that come together should share one; but each caller
 * waits for its flush's answer, so the wait is added to every flush. A millisecond gathered about
 * as many as longer waits did (the digests part of `npm run bench:pipeline`).
 */
const FLUSH_LINGER_MS = 1;

/**
 * The deliver stage: a (rule, period)'s pending matches become deliveries, one per member, unique
 * per (rule, member, period key), for a period that fell due (`deliver`: a digest period or an
 * instant rule's burst, handed on by the schedule stage or a deliver job) or an operator's flush
 * (`flush`). An instant rule's first match is delivered by the statement that records it (the
 * match stage's). It owns the transactions its callers share: deliver jobs and the periods handed
 * here go a few hundred to a transaction, and flushes of the same moment share theirs (Batcher,
 * group commit).
 */
export class DeliverStage {
  private readonly periods: Batcher<DuePeriod, number>;
  private readonly flushes: Batcher<string, FlushOutcome>;

  constructor(
    private readonly resources: Pick<PipelineResources, 'db' | 'now'>,
    /** Where the deliveries made go. */
    readonly toSend: ToSend,
  ) {
    // Each period answers with its transaction's deliveries.
    this.periods = new Batcher(async (batch) => {
      const created = await this.deliverPeriods(batch);
      return batch.map(() => created.length);
    }, { maxBatch: DELIVER_BATCH_PERIODS, concurrency: 2 });
    // Two at a time, so one huge flush does not hold up the others, each waiting a moment for company.
    this.flushes = new Batcher((ruleIds) => this.flushRules(ruleIds), { maxBatch: FLUSH_BATCH_RULES, concurrency: 2, lingerMs: FLUSH_LINGER_MS });
  }

  /** Delivers a due period, in a transaction shared with the periods of the moment: the number of deliveries that transaction made. */
  deliver(period: DuePeriod): Promise<number> {
    return this.periods.submit({ ruleId: period.ruleId, periodKey: period.periodKey });
  }

  /**
   * An operator sends a rule's pending matches now, as one digest per member, whatever periods they
   * were waiting for (see flushRules; concurrent flushes share its transaction).
   */
  async flush(ruleId: string): Promise<FlushResult> {
    if (!isUuid(ruleId)) throw new NotFound('Notification rule not found.');
    // As the database writes a uuid as text, so the rule is known by the id it locked.
    const outcome = await this.flushes.submit(ruleId.toLowerCase());
    if (!outcome) throw new NotFound('Notification rule not found.');
    if (outcome.sendError !== undefined) throw outcome.sendError;
    return { matches: outcome.matches, deliveries: outcome.deliveries };
  }

  /**
   * Delivers rules' pending matches of their periods and hands the deliveries on, for any number of
   * (rule, period) pairs in one transaction. The rules' rows are locked, so work on a rule
   * serializes with concurrent deliveries, flushes and matches. A period that already has
   * deliveries (matches that arrived late) gets a late-round period key of its own instead of a
   * second e-mail under the same one. Pairs of rules that no longer exist deliver nothing.
   * Returns the ids of the deliveries it created.
   */
  async deliverPeriods(periods: readonly DuePeriod[]): Promise<string[]> {
    const unique = [...new Map(periods.map((period) => [`${period.ruleId}|${period.periodKey}`, period])).values()];
    if (!unique.length) return [];
    const claims = this.toSend.claims();
    const { deliveries, claimed } = await withTransaction(this.resources.db, async (tx) => {
      const rules = await lockRules(tx, unique.map((period) => period.ruleId));
      const wanted = unique.filter((period) => rules.has(period.ruleId));
      const delivered = await periodsWithDeliveries(tx, wanted);
      const keyed = wanted.map((period) =>
        delivered.has(`${period.ruleId}|${period.periodKey}`) ? { ...period, lateKey: periodKeys.lateRound(period.periodKey) } : period,
      );
      await rekeyPendingMatches(tx, keyed.flatMap((period) => ('lateKey' in period ? [{ ruleId: period.ruleId, fromKey: period.periodKey, toKey: period.lateKey }] : [])));
      // Matches of a disabled rule or of a rule without members are dropped; a member in their quiet
      // hours has an instant or hourly batch without a critical event held until they end.
      return createDeliveries(tx, keyed.map((period) => ({ ruleId: period.ruleId, periodKey: 'lateKey' in period ? period.lateKey : period.periodKey })), this.resources.now(), claims);
    });
    const created = deliveries.map((delivery) => delivery.id);
    // If this fails the deliveries wait as pending; the reconciler asks again.
    await this.toSend.hand(created, claimed);
    return created;
  }

  /**
   * One transaction for any number of rules: their rows locked, then one statement (flushDeliveries)
   * moves every pending match of each to a flush period of its own and makes them deliveries, so
   * the schedule stage never sees them half-way. A rule asked for twice is flushed once: the second
   * asker finds nothing left, as it would after the first.
   */
  private async flushRules(ruleIds: readonly string[]): Promise<FlushOutcome[]> {
    const now = this.resources.now();
    const periodKey = periodKeys.flush(now);
    // Both statements find their rows by rule id, and a kept plan costs less than planning afresh
    // for a call's few rules (PostgreSQL otherwise plans the flush statement on every call).
    const claims = this.toSend.claims();
    const { found, events, deliveries, claimed } = await withTransaction(this.resources.db, async (tx) => {
      const found = await lockRules(tx, ruleIds);
      return { found, ...(await flushDeliveries(tx, [...found], periodKey, now, claims)) };
    }, { genericPlans: true });
    // Should this fail, the deliveries wait as pending (the reconciler asks again); each flush of the
    // batch reports it, as it would alone.
    const sendError = await this.toSend.hand(deliveries.map((delivery) => delivery.id), claimed).then(
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
}
