import { clientOf, type Transaction } from '../client';

/**
 * Turns the pending matches of (rule, period) pairs into deliveries, one per member, in one
 * statement for any number of pairs: the matches become `delivered` (or `dropped`, for a
 * disabled rule or one without subscribed members) and each subscribed member (not opted out
 * through an unsubscribe link) gets one delivery per (rule, period),
 * unique per (rule, member, period) across the months deliveries are partitioned by. Returns the ids of the deliveries created.
 */
export async function createDeliveries(tx: Transaction, periods: ReadonlyArray<{ ruleId: string; periodKey: string }>): Promise<string[]> {
  if (!periods.length) return [];
  const { rows } = await clientOf(tx).query<{ id: string }>(
    `WITH wanted AS (
       SELECT DISTINCT * FROM unnest($1::uuid[], $2::text[]) AS p(rule_id, period_key)
     ), taken AS (
       UPDATE matches m
          SET status = CASE WHEN r.enabled AND EXISTS (SELECT 1 FROM notification_rule_members rm WHERE rm.rule_id = r.id AND rm.unsubscribed_at IS NULL)
                            THEN 'delivered'::match_status ELSE 'dropped'::match_status END
         FROM wanted w, notification_rules r
        WHERE m.rule_id = w.rule_id AND m.period_key = w.period_key AND m.status = 'pending' AND r.id = m.rule_id
       RETURNING m.rule_id, m.period_key, m.organization_id, m.event_id, m.event_received_at, m.status
     ), periods AS (
       SELECT t.rule_id, t.period_key, count(*)::int AS event_count, min(e.received_at) AS first_event_at
         FROM taken t JOIN events e ON e.organization_id = t.organization_id AND e.id = t.event_id AND e.received_at = t.event_received_at
        WHERE t.status = 'delivered'
        GROUP BY t.rule_id, t.period_key
     )
     INSERT INTO deliveries (id, rule_id, team_member_id, email, period_key, event_count, first_event_at)
     SELECT gen_random_uuid(), p.rule_id, t.id, t.email, p.period_key, p.event_count, p.first_event_at
       FROM periods p
       JOIN notification_rule_members rm ON rm.rule_id = p.rule_id AND rm.unsubscribed_at IS NULL
       JOIN team_members t ON t.id = rm.team_member_id
      -- Each month of deliveries has its own unique index (rule, member, period key), the
      -- arbiter below; a key delivered in an earlier month is skipped here. Callers hold the
      -- rule's row, so no other transaction adds the same key meanwhile.
      WHERE NOT EXISTS (SELECT 1 FROM deliveries d
                         WHERE d.rule_id = p.rule_id AND d.team_member_id = t.id AND d.period_key = p.period_key)
     ON CONFLICT DO NOTHING
     RETURNING id`,
    [periods.map((p) => p.ruleId), periods.map((p) => p.periodKey)],
  );
  return rows.map((row) => row.id);
}
