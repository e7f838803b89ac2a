import { periodContaining, type Frequency } from '@notify/core';
import { clientOf, type Transaction } from '../client';

/** A member's effective time zone changing: from `from` (where they have been since `fromSince`; null: always) to `to`. */
export interface ZoneMove {
  memberId: string;
  from: string;
  fromSince: Date | null;
  to: string;
}

/**
 * Moves a member to their new time zone at `now` (their zone_since), with what their digest rules
 * owe them, so that they get no period twice and lose none: the pending matches their old zone's
 * members share (made since they came into it) are copied as matches of their own, and those
 * already their own are moved, all into the period that contains `now` in the new zone. The new
 * zone's shared matches made before `now` are not theirs. The caller holds the member's row and
 * changes the zone itself. Returns how many matches are now theirs.
 */
export async function moveMemberDigests(tx: Transaction, move: ZoneMove, now: Date): Promise<number> {
  const client = clientOf(tx);
  await client.query(`UPDATE team_members SET zone_since = $2 WHERE id = $1`, [move.memberId, now]);
  const { rows: rules } = await client.query<{ id: string; frequency: Frequency; delivery_hour: number | null; delivery_day_of_week: number | null }>(
    `SELECT r.id, r.frequency, r.delivery_hour, r.delivery_day_of_week
       FROM notification_rules r JOIN notification_rule_members rm ON rm.rule_id = r.id
      WHERE rm.team_member_id = $1 AND r.frequency IN ('daily', 'weekly', 'monthly')`,
    [move.memberId],
  );
  if (!rules.length) return 0;
  const periods = rules.map((rule) =>
    periodContaining({ frequency: rule.frequency, deliveryHour: rule.delivery_hour, deliveryDayOfWeek: rule.delivery_day_of_week, timeZone: move.to }, now),
  );
  const result = await client.query(
    `WITH target AS (
       SELECT * FROM unnest($2::uuid[], $3::text[], $4::timestamptz[]) AS t(rule_id, period_key, due_at)
     ), own AS (
       UPDATE matches m SET period_key = t.period_key, due_at = t.due_at
         FROM target t
        WHERE m.rule_id = t.rule_id AND m.status = 'pending' AND m.audience = '@' || $1::text
       RETURNING 1
     ), copied AS (
       INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at, status, audience, created_at)
       SELECT m.rule_id, m.organization_id, m.event_id, m.event_received_at, t.period_key, t.due_at, 'pending', '@' || $1::text, m.created_at
         FROM matches m JOIN target t ON t.rule_id = m.rule_id
        WHERE m.status = 'pending' AND m.audience = $5 AND m.created_at >= COALESCE($6::timestamptz, '-infinity')
       ON CONFLICT DO NOTHING
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM own) + (SELECT count(*) FROM copied) AS n`,
    [move.memberId, rules.map((rule) => rule.id), periods.map((period) => period.key), periods.map((period) => period.dueAt), move.from, move.fromSince],
  );
  return Number(result.rows[0]?.n ?? 0);
}
