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

/** The most due periods the schedule stage asks for at once. */
export const DUE_PERIODS_PAGE = 1000;

/** A bound on a tick's pages, should periods delivered without error stay due: the next tick goes on. */
const MAX_PAGES_A_TICK = 50;

/** A process's own delivery of due periods (the deliver role beside the schedule role). */
export interface DeliveringHere {
  take: DeliverHere;
  /** Waits for the periods taken so far: true when all were delivered and more may be taken. */
  settled(): Promise<boolean>;
}

/**
 * A tick of the schedule stage: requestDuePeriods, again and again while it finds a full page that
 * `here` takes, each time once the periods taken are delivered (not when one failed, or the process
 * is closing: the next tick tries). A page a tick held the 09:00 wave to 1,000 periods a second at
 * the default tick, whatever the SMTP server took (the bench's 20,000 one-member digests: 932
 * e-mails a second that way, 1,104 this way; the raw client 1,250). Without delivery here (the
 * periods go to deliver jobs, which the next page would find still pending), one page a tick.
 * Returns how many periods were due in all.
 */
export async function scheduleTick(ctx: PipelineContext, here?: DeliveringHere): Promise<number> {
  let total = 0;
  for (let page = 1; ; page++) {
    const found = await requestDuePeriods(ctx, { deliverHere: here?.take });
    total += found;
    if (found < DUE_PERIODS_PAGE || page >= MAX_PAGES_A_TICK || !here || !(await here.settled())) return total;
  }
}

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
  const due = await findDuePeriods(ctx.db, options.dueBefore ?? ctx.now(), options.limit ?? DUE_PERIODS_PAGE);
  const queued = options.deliverHere ? options.deliverHere(due) : due;
  await ctx.queues.requestDeliver(queued, 0, { replaceFinished: options.replaceFinished });
  return due.length;
}
