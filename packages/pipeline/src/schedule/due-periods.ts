import { findDuePeriods } from '@notify/db';
import type { PipelineContext } from '../context';

/**
 * The schedule stage: asks for the deliver job of every (rule, period) whose pending matches are
 * due. Deliver job ids are deterministic, so schedule roles running side by side, or a tick that
 * repeats a request, still give one delivery per period. A period that fell due while
 * everything was down is due now, and goes out once.
 */
export async function requestDuePeriods(ctx: PipelineContext, options: { limit?: number; replaceFinished?: boolean } = {}): Promise<number> {
  const due = await findDuePeriods(ctx.db, ctx.now(), options.limit ?? 1000);
  await ctx.queues.requestDeliver(due, 0, { replaceFinished: options.replaceFinished });
  return due.length;
}
