import { analyzeGrownTables, dropExpiredHistory, ensureHistoryPartitions, forgetOldFindings, type ExpiredHistory } from '@notify/db';
import type { PipelineResources } from '../resources';

/** Months of history partitions kept created ahead of the clock. */
export const MONTHS_AHEAD = 2;

/** How often the schedule role maintains the history partitions. */
export const RETENTION_INTERVAL_MS = 3_600_000;

/** How often the schedule role looks for tables that have grown past their planner statistics. */
export const STATISTICS_INTERVAL_MS = 5_000;

export interface RetentionResult extends ExpiredHistory {
  /** Partitions created ahead. */
  created: string[];
  /** Findings forgotten: their rules would take them as news again anyway. */
  findingsForgotten: number;
}

/**
 * Retention of the history (events, matches, deliveries), run by the schedule role: creates the
 * months ahead, then drops whole months that ended more than `retentionDays` ago, except a month
 * that still holds anything owed (see dropExpiredHistory), and forgets the findings (rule_findings) no
 * rule would call repeats any more. Idempotent; safe from several processes.
 */
export async function maintainHistory(ctx: PipelineResources, retentionDays: number): Promise<RetentionResult> {
  const now = ctx.now();
  const created = await ensureHistoryPartitions(ctx.db, now, MONTHS_AHEAD);
  const expired = await dropExpiredHistory(ctx.db, new Date(now.getTime() - retentionDays * 86_400_000));
  const findingsForgotten = await forgetOldFindings(ctx.db, now);
  return { created, ...expired, findingsForgotten };
}

/**
 * Keeps the planner's statistics up with the history's growth, run by the schedule role every
 * STATISTICS_INTERVAL_MS: analyzes each table that has doubled since it was last analyzed (see
 * analyzeGrownTables), so the prepared hot statements are planned again for its size. Returns the
 * tables analyzed.
 */
export async function refreshStatistics(ctx: PipelineResources): Promise<string[]> {
  return analyzeGrownTables(ctx.db);
}
