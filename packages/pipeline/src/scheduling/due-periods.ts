import type { PipelineContext } from '../context';

/**
 * Asks for the digest of every (rule, period) whose pending matches are due.
 * Digest job ids are deterministic, so schedulers running side by side, or a
 * tick that repeats a request, still give one digest per period. A period that
 * fell due while everything was down is due now, and goes out once.
 */
export async function requestDueDigests(ctx: PipelineContext, options: { limit?: number; replaceFinished?: boolean } = {}): Promise<number> {
  const limit = options.limit ?? 1000;
  const { rows } = await ctx.db.pool.query<{ rule_id: string; period_key: string }>(
    `SELECT rule_id, period_key FROM matches
      WHERE status = 'pending' AND due_at <= $1
      GROUP BY rule_id, period_key
      ORDER BY min(due_at)
      LIMIT $2`,
    [ctx.now(), limit],
  );
  await ctx.queues.requestDigests(rows.map((row) => ({ ruleId: row.rule_id, periodKey: row.period_key })), 0, { replaceFinished: options.replaceFinished });
  return rows.length;
}
