import { withTransaction } from '@notify/db';
import type { PipelineContext } from '../context';

/**
 * Turns a rule's pending matches of one period into deliveries, one per member
 * (unique per rule, member and period), and asks the mailer to send them.
 * Runs in one transaction with the rule's row locked, so concurrent digests of a
 * rule serialize; a period that already has deliveries (matches that arrived
 * late) gets a period key of its own instead of a second e-mail under the same one.
 * Returns the ids of the deliveries it created.
 */
export async function deliverPeriod(ctx: PipelineContext, ruleId: string, periodKey: string): Promise<string[]> {
  const created = await withTransaction(ctx.db.pool, async (client) => {
    const { rows: rules } = await client.query<{ enabled: boolean }>('SELECT enabled FROM notification_rules WHERE id = $1 FOR UPDATE', [ruleId]);
    const rule = rules[0];
    const { rows: pending } = rule
      ? await client.query<{ id: string; received_at: Date }>(
          `SELECT m.id, e.received_at FROM matches m
             JOIN events e ON e.organization_id = m.organization_id AND e.id = m.event_id
            WHERE m.rule_id = $1 AND m.period_key = $2 AND m.status = 'pending'
            FOR UPDATE OF m`,
          [ruleId, periodKey],
        )
      : { rows: [] };
    if (!rule || pending.length === 0) return [];
    const ids = pending.map((match) => match.id);
    const { rows: members } = await client.query<{ id: string; email: string }>(
      `SELECT t.id, t.email FROM notification_rule_members rm JOIN team_members t ON t.id = rm.team_member_id WHERE rm.rule_id = $1`,
      [ruleId],
    );
    if (!rule.enabled || members.length === 0) {
      await client.query(`UPDATE matches SET status = 'dropped' WHERE id = ANY($1::bigint[])`, [ids]);
      return [];
    }
    const { rows: existing } = await client.query('SELECT 1 FROM deliveries WHERE rule_id = $1 AND period_key = $2 LIMIT 1', [ruleId, periodKey]);
    let key = periodKey;
    if (existing.length) {
      key = `${periodKey}~${Date.now().toString(36)}`;
      await client.query('UPDATE matches SET period_key = $2 WHERE id = ANY($1::bigint[])', [ids, key]);
    }
    // A reduce, not Math.min(...): a period can hold more matches than a call takes arguments.
    const firstEventAt = new Date(pending.reduce((first, match) => Math.min(first, match.received_at.getTime()), Infinity));
    const { rows: deliveries } = await client.query<{ id: string }>(
      `INSERT INTO deliveries (id, rule_id, team_member_id, email, period_key, event_count, first_event_at)
       SELECT gen_random_uuid(), $1, t.id, t.email, $2, $3, $4 FROM unnest($5::uuid[], $6::text[]) AS t(id, email)
       ON CONFLICT (rule_id, team_member_id, period_key) DO NOTHING
       RETURNING id`,
      [ruleId, key, ids.length, firstEventAt, members.map((m) => m.id), members.map((m) => m.email)],
    );
    await client.query(`UPDATE matches SET status = 'delivered' WHERE id = ANY($1::bigint[])`, [ids]);
    return deliveries.map((delivery) => delivery.id);
  });
  // If this fails the deliveries wait as pending; the reconciler asks again.
  await ctx.queues.requestMail(created);
  return created;
}
