import { randomBytes } from 'node:crypto';
import { withTransaction } from '@notify/db';
import type { PipelineContext } from '../context';
import { deliverNow } from './deliver-now';

/**
 * Turns a rule's pending matches of one period into deliveries, one per member
 * (unique per rule, member and period), and asks the mailer to send them.
 * Runs in one transaction with the rule's row locked, so concurrent digests of a
 * rule serialize. A period that already has deliveries (matches that arrived
 * late) gets a period key of its own instead of a second e-mail under the same
 * one; the rest is `deliverNow`'s. Returns the ids of the deliveries it created.
 */
export async function deliverPeriod(ctx: PipelineContext, ruleId: string, periodKey: string): Promise<string[]> {
  const created = await withTransaction(ctx.db.pool, async (client) => {
    const { rows: rules } = await client.query('SELECT 1 FROM notification_rules WHERE id = $1 FOR UPDATE', [ruleId]);
    if (!rules.length) return [];
    const { rows: existing } = await client.query('SELECT 1 FROM deliveries WHERE rule_id = $1 AND period_key = $2 LIMIT 1', [ruleId, periodKey]);
    let key = periodKey;
    if (existing.length) {
      // Random, not clock-based: two late rounds within one clock tick must not share a key.
      key = `${periodKey}~${randomBytes(4).toString('hex')}`;
      await client.query(`UPDATE matches SET period_key = $3 WHERE rule_id = $1 AND period_key = $2 AND status = 'pending'`, [ruleId, periodKey, key]);
    }
    return deliverNow(client, [{ ruleId, periodKey: key }]);
  });
  // If this fails the deliveries wait as pending; the reconciler asks again.
  await ctx.queues.requestMail(created);
  return created;
}
