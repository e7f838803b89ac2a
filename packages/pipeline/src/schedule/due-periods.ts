import { findDuePeriods } from '@notify/db';
import type { PipelineContext } from '../context';

/** A (rule, period) whose pending matches are due. */
export interface DuePeriod {
  ruleId: string;
  periodKey: string;
}

/**
 * Delivers due periods in this process (a process that runs the deliver role too), without a
 * deliver job each; returns those it declines, which get jobs.
 */
export type DeliverHere = (periods: readonly DuePeriod[]) => DuePeriod[];

/**
 * The schedule stage: asks for the deliver job of every (rule, period) whose pending matches are
 * due, or hands them to `deliverHere`. Deliver job ids are deterministic, so schedule roles running
 * side by side, or a tick that repeats a request, still give one delivery per period; so does a
 * period delivered here and by a job (the deliver stage's row locks). A period that fell due while
 * everything was down is due now, and goes out once. `dueBefore` takes only the periods due by then
 * (the reconciler's). Returns how many periods were due.
 */
export async function requestDuePeriods(
  ctx: PipelineContext,
  options: { limit?: number; replaceFinished?: boolean; deliverHere?: DeliverHere; dueBefore?: Date } = {},
): Promise<number> {
  const due = await findDuePeriods(ctx.db, options.dueBefore ?? ctx.now(), options.limit ?? 1000);
  const queued = options.deliverHere ? options.deliverHere(due) : due;
  await ctx.queues.requestDeliver(queued, 0, { replaceFinished: options.replaceFinished });
  return due.length;
}
