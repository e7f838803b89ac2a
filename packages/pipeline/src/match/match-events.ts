import { periodKeys, type MatchableEvent } from '@notify/core';
import { lockUnmatchedEvents, markEventsMatched, openCoalescingWindows, recordMatches, withTransaction, type NewMatch, type UnmatchedEvent } from '@notify/db';
import type { PipelineContext } from '../context';
import type { IndexedRule, RuleIndex } from '../rules/rule-index';
import { deliverInTransaction } from '../deliver/deliver';
import { PeriodCache } from './period-cache';

/** Per process: a period stays right until it ends, whichever job asks. */
const periods = new PeriodCache();

interface Candidate {
  rule: IndexedRule;
  event: UnmatchedEvent;
}

export interface MatchResult {
  events: number;
  matches: number;
  /** Deliveries made at once for instant rules' first matches. */
  immediate: number;
}

function toMatchable(event: UnmatchedEvent): MatchableEvent {
  return { asset: event.asset, asset_type: event.asset_type, severity: event.severity, tags: event.tags, data: event.data };
}

/**
 * Evaluates stored events against the rule index and records the matches,
 * set-based: one read, one insert, one update, in one transaction. Events already
 * matched are skipped, so a retried or duplicated job does nothing twice.
 */
export async function matchEvents(ctx: PipelineContext, index: RuleIndex, pairs: ReadonlyArray<readonly [string, string]>): Promise<MatchResult> {
  if (!pairs.length) return { events: 0, matches: 0, immediate: 0 };
  const now = ctx.now();
  const rulesById = new Map<string, IndexedRule>();
  const { created, deliveryIds, eventCount } = await withTransaction(ctx.db, async (tx) => {
    // Row locks keep two match jobs that got the same events from matching them twice.
    const events = await lockUnmatchedEvents(tx, pairs);
    const candidates: Candidate[] = await index.matchAll(events, toMatchable);
    for (const { rule } of candidates) rulesById.set(rule.id, rule);

    const matches: NewMatch[] = [];
    const instant = candidates.filter((candidate) => candidate.rule.frequency === 'instant');
    for (const { rule, event } of candidates) {
      if (rule.frequency === 'instant') continue;
      const period = periods.containing(rule, now);
      matches.push({ ruleId: rule.id, organizationId: event.organization_id, eventId: event.id, periodKey: period.key, dueAt: period.dueAt });
    }
    if (instant.length) {
      // Opens a coalescing window on every quiet rule, atomically, so two match jobs
      // agree on which match is "first" and which join the burst.
      const ruleIds = [...new Set(instant.map((candidate) => candidate.rule.id))];
      const windows = await openCoalescingWindows(tx, ruleIds, now, new Date(now.getTime() + ctx.instantCoalesceMs));
      const byRule = new Map(windows.map((window) => [window.id, window]));
      const firstTaken = new Set<string>();
      for (const { rule, event } of instant) {
        const window = byRule.get(rule.id);
        if (!window) continue;
        const immediate = window.opened && !firstTaken.has(rule.id);
        if (immediate) firstTaken.add(rule.id);
        matches.push({
          ruleId: rule.id,
          organizationId: event.organization_id,
          eventId: event.id,
          periodKey: immediate ? periodKeys.instant(now) : periodKeys.burst(window.burst_until),
          dueAt: immediate ? now : window.burst_until,
        });
      }
    }

    const created = await recordMatches(tx, matches);
    // An instant rule's first match goes out now, in this transaction, rather than
    // at the schedule stage's next tick.
    const immediate = [...new Map(created.filter((m) => m.dueAt.getTime() <= now.getTime()).map((m) => [`${m.ruleId}|${m.periodKey}`, m])).values()];
    const deliveryIds = await deliverInTransaction(tx, immediate.map((m) => ({ ruleId: m.ruleId, periodKey: m.periodKey })));
    await markEventsMatched(tx, events, now);
    return { created, deliveryIds, eventCount: events.length };
  });

  if (ctx.metrics && created.length) {
    const counts = new Map<string, { scope: string; frequency: string; count: number }>();
    for (const match of created) {
      const rule = rulesById.get(match.ruleId);
      if (!rule) continue;
      const key = `${rule.scope}|${rule.frequency}`;
      const entry = counts.get(key) ?? { scope: rule.scope, frequency: rule.frequency, count: 0 };
      entry.count += 1;
      counts.set(key, entry);
    }
    for (const { scope, frequency, count } of counts.values()) ctx.metrics.matched(scope, frequency, count);
  }

  // Should this fail, the deliveries wait as pending: the reconciler asks again.
  await ctx.queues.requestSend(deliveryIds);
  return { events: eventCount, matches: created.length, immediate: deliveryIds.length };
}
