import type { Filters, Frequency, NewRule, Scope } from '@notify/core';
import { clientOf, withTransaction, type DatabaseHandle } from '../client';

/** The rule an insert made (its id null when it made none), its members, and the ids that named no member of the organization. */
export interface CreatedRow {
  id: string | null;
  name: string;
  scope: Scope;
  strategy: Filters | null;
  frequency: Frequency;
  delivery_hour: number | null;
  delivery_day_of_week: number | null;
  enabled: boolean;
  renotify_after_hours: number | null;
  added_date: Date;
  last_update_date: Date;
  members: Array<{ team_member_uuid: string; email: string }> | null;
  unknown: string[] | null;
}

/** What a rule create's insert answers: the row made (or none, and why) and the plan's limit. */
export interface InsertedRule {
  row: CreatedRow & { limit_reached: boolean };
  maxRules: number;
}

/** Whether the organization ($1) holds $10 rules or more, from the triggers' count (rule_counts): a sum of a few rows. */
const COUNTED_BY_TRIGGERS = 'SELECT COALESCE(sum(rules), 0) >= $10 AS reached FROM rule_counts WHERE organization_id = $1';
/** The same, counted on the rules themselves (at most $10 of them): exact whatever happened to rule_counts. */
const COUNTED_EXACTLY = 'SELECT count(*) >= $10 AS reached FROM (SELECT 1 FROM notification_rules WHERE organization_id = $1 LIMIT $10) r';

/**
 * One statement checks that every member belongs to the organization and that its plan has room,
 * inserts the rule and its members only if so, and returns the resource (one round trip after
 * the plan's, one commit), in a transaction of its own.
 *
 * The plan's max_rules is exact under any concurrency, and creates far from it run side by side.
 * - Side by side, a create holds its organization's row FOR SHARE and inserts only if fewer than
 *   max_rules − (max_connections + max_prepared_transactions) rules are committed, as counted by
 *   triggers into `rule_counts` (slots, so that concurrent creates seldom share a row; a sum of a
 *   few rows instead of counting the organization's rules). The creates it cannot see are
 *   uncommitted ones, each holding a connection (or a prepared transaction), so committed + in
 *   flight stays within max_rules.
 * - Nearer the limit, a create runs alone: it takes the row FOR NO KEY UPDATE, which waits for the
 *   side-by-side creates in flight to commit and keeps new ones out, and counts the committed rules
 *   themselves (its own statement's fresh snapshot, after the lock; at most max_rules of them). A
 *   trigger count gone wrong (a TRUNCATE bypasses triggers) then only changes which way creates go.
 * Every create running alone and counting its organization's rules made concurrent creates into a
 * large organization take turns (measured in commit 78afef7).
 * NO KEY UPDATE and SHARE both leave the KEY SHARE locks of foreign keys (other rows' inserts) alone.
 *
 * Side by side, a count at or past its bound inserts nothing and answers null: the create is to
 * run alone, in a transaction of its own (upgrading a SHARE lock that other creates hold too would
 * deadlock them). A body that is wrong anyway (unknown members) is answered side by side.
 */
export function insertRuleWithinPlan(db: DatabaseHandle, organizationId: string, rule: NewRule, mode: 'alone'): Promise<InsertedRule>;
export function insertRuleWithinPlan(db: DatabaseHandle, organizationId: string, rule: NewRule, mode: 'side by side'): Promise<InsertedRule | null>;
export async function insertRuleWithinPlan(db: DatabaseHandle, organizationId: string, rule: NewRule, mode: 'side by side' | 'alone'): Promise<InsertedRule | null> {
  return withTransaction(db, async (tx) => {
    const client = clientOf(tx);
    const { rows: plan } = await client.query<{ max_rules: number; in_flight: number }>(
      `SELECT max_rules, current_setting('max_connections')::int + current_setting('max_prepared_transactions')::int AS in_flight
         FROM organizations WHERE id = $1 ${mode === 'alone' ? 'FOR NO KEY UPDATE' : 'FOR SHARE'}`,
      [organizationId],
    );
    const maxRules = plan[0]?.max_rules ?? 0;
    // The count the insert needs to stay under (never below zero: it is a LIMIT too).
    const bound = mode === 'alone' ? Math.max(maxRules, 0) : maxRules - (plan[0]?.in_flight ?? 0);
    if (mode === 'side by side' && bound <= 0) return null;
    const { rows } = await client.query<InsertedRule['row']>(
      `WITH wanted AS (SELECT DISTINCT unnest($2::uuid[]) AS id),
            known AS (SELECT t.id, t.email FROM team_members t JOIN wanted w ON w.id = t.id WHERE t.organization_id = $1),
            held AS (${mode === 'alone' ? COUNTED_EXACTLY : COUNTED_BY_TRIGGERS}),
            rule AS (
              INSERT INTO notification_rules (id, organization_id, name, scope, strategy, frequency, delivery_hour, delivery_day_of_week, enabled, renotify_after_hours)
              SELECT gen_random_uuid(), $1, $3, $4::scope, $5::jsonb, $6::frequency, $7, $8, $9, $11
               WHERE (SELECT count(*) FROM known) = (SELECT count(*) FROM wanted) AND NOT (SELECT reached FROM held)
              RETURNING id, name, scope, strategy, frequency, delivery_hour, delivery_day_of_week, enabled, renotify_after_hours, added_date, last_update_date
            ),
            links AS (
              INSERT INTO notification_rule_members (rule_id, team_member_id) SELECT rule.id, known.id FROM rule, known
            )
       SELECT rule.*,
              (SELECT json_agg(json_build_object('team_member_uuid', k.id, 'email', k.email) ORDER BY k.email) FROM known k) AS members,
              (SELECT array_agg(w.id) FROM wanted w WHERE w.id NOT IN (SELECT id FROM known)) AS unknown,
              (SELECT reached FROM held) AS limit_reached
         FROM (SELECT 1) AS one LEFT JOIN rule ON true`,
      [
        organizationId,
        rule.memberIds,
        rule.name,
        rule.scope,
        rule.strategy === null ? null : JSON.stringify(rule.strategy),
        rule.frequency,
        rule.deliveryHour,
        rule.deliveryDayOfWeek,
        rule.enabled,
        bound,
        rule.renotifyAfterHours,
      ],
    );
    const row = rows[0]!;
    // A body that is wrong anyway is answered from here: the count does not change that.
    if (mode === 'side by side' && row.limit_reached && !row.unknown?.length) return null;
    return { row, maxRules };
  });
}
