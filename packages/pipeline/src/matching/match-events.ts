import type { MatchableEvent, Scope, Severity } from '@notify/core';
import { withTransaction } from '@notify/db';
import type { PipelineContext } from '../context';
import type { IndexedRule, RuleIndex } from '../rules/rule-index';
import { deliverNow } from '../delivery/deliver-now';
import { PeriodCache } from './period-cache';

/** Per process: a period stays right until it ends, whichever job asks. */
const periods = new PeriodCache();

interface EventRow {
  organization_id: string;
  id: string;
  scope: Scope;
  occurred_at: Date;
  asset: string;
  asset_type: string | null;
  severity: Severity | null;
  tags: string[] | null;
  data: Record<string, unknown> | null;
}

interface Candidate {
  rule: IndexedRule;
  event: EventRow;
}

interface NewMatch {
  ruleId: string;
  organizationId: string;
  eventId: string;
  periodKey: string;
  dueAt: Date;
}

export interface MatchResult {
  events: number;
  matches: number;
  /** Deliveries made at once for instant rules' first matches. */
  immediate: number;
}

/** Period keys of instant rules: the first match of a quiet rule goes at once, a burst after it at the window's end. */
export const instantKeys = {
  immediate: (at: Date) => `i${at.getTime()}`,
  burst: (until: Date) => `b${until.getTime()}`,
};

function toMatchable(event: EventRow): MatchableEvent {
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
  const { created, deliveryIds, eventCount } = await withTransaction(ctx.db.pool, async (client) => {
    let created: NewMatch[] = [];
    // Row locks keep two matchers that got the same events from matching them twice.
    const { rows: events } = await client.query<EventRow>(
      `SELECT e.organization_id, e.id, e.scope, e.occurred_at, e.asset, e.asset_type, e.severity, e.tags, e.data
         FROM events e JOIN unnest($1::uuid[], $2::text[]) AS p(organization_id, id)
           ON e.organization_id = p.organization_id AND e.id = p.id
        WHERE e.matched_at IS NULL
        ORDER BY e.occurred_at, e.id
          FOR UPDATE OF e SKIP LOCKED`,
      [pairs.map((pair) => pair[0]), pairs.map((pair) => pair[1])],
    );
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
      // Opens a coalescing window on every quiet rule, atomically, so two matchers
      // agree on which match is "first" and which join the burst.
      const ruleIds = [...new Set(instant.map((candidate) => candidate.rule.id))];
      const { rows: windows } = await client.query<{ id: string; burst_until: Date; opened: boolean }>(
        `WITH old AS (
           SELECT id, burst_until FROM notification_rules WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE
         )
         UPDATE notification_rules r
            SET burst_until = CASE WHEN old.burst_until IS NULL OR old.burst_until <= $2 THEN $3 ELSE old.burst_until END
           FROM old WHERE r.id = old.id
         RETURNING r.id, r.burst_until, (old.burst_until IS NULL OR old.burst_until <= $2) AS opened`,
        [ruleIds, now, new Date(now.getTime() + ctx.instantCoalesceMs)],
      );
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
          periodKey: immediate ? instantKeys.immediate(now) : instantKeys.burst(window.burst_until),
          dueAt: immediate ? now : window.burst_until,
        });
      }
    }

    if (matches.length) {
      const { rows } = await client.query<{ rule_id: string; organization_id: string; event_id: string; period_key: string; due_at: Date }>(
        `INSERT INTO matches (rule_id, organization_id, event_id, period_key, due_at)
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[])
         ON CONFLICT (rule_id, organization_id, event_id) DO NOTHING
         RETURNING rule_id, organization_id, event_id, period_key, due_at`,
        [
          matches.map((m) => m.ruleId),
          matches.map((m) => m.organizationId),
          matches.map((m) => m.eventId),
          matches.map((m) => m.periodKey),
          matches.map((m) => m.dueAt),
        ],
      );
      created = rows.map((row) => ({ ruleId: row.rule_id, organizationId: row.organization_id, eventId: row.event_id, periodKey: row.period_key, dueAt: row.due_at }));
    }
    // An instant rule's first match goes out now, in this transaction, rather than
    // at the scheduler's next tick.
    const immediate = [...new Map(created.filter((m) => m.dueAt.getTime() <= now.getTime()).map((m) => [`${m.ruleId}|${m.periodKey}`, m])).values()];
    const deliveryIds = await deliverNow(client, immediate.map((m) => ({ ruleId: m.ruleId, periodKey: m.periodKey })));
    if (events.length) {
      await client.query(
        `UPDATE events e SET matched_at = $3
           FROM unnest($1::uuid[], $2::text[]) AS p(organization_id, id)
          WHERE e.organization_id = p.organization_id AND e.id = p.id`,
        [events.map((event) => event.organization_id), events.map((event) => event.id), now],
      );
    }
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
  await ctx.queues.requestMail(deliveryIds);
  return { events: eventCount, matches: created.length, immediate: deliveryIds.length };
}
