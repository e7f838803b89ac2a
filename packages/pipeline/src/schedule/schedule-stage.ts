import { findDuePeriods } from '@notify/db';
import type { PipelineResources } from '../resources';
import type { ToDeliver } from '../hand-offs/to-deliver';

/** The most due periods the schedule stage asks for at once. */
export const DUE_PERIODS_PAGE = 1000;

/** A bound on a tick's pages, should periods delivered without error stay due: the next tick goes on. */
const MAX_PAGES_A_TICK = 50;

/**
 * The schedule stage: every tick, it hands every (rule, period) whose pending matches are due to the
 * deliver stage. Deliveries are unique per period, so schedule roles running side by side, or a
 * tick that repeats a request, still give one delivery per period. A period that fell due while
 * everything was down is due now, and goes out once.
 */
export class ScheduleStage {
  constructor(
    private readonly resources: Pick<PipelineResources, 'db' | 'now'>,
    private readonly toDeliver: ToDeliver,
  ) {}

  /**
   * A tick: a page of due periods handed on, again and again while it finds a full page and the
   * deliver stage settles them here (ToDeliver.settled: not when one failed, or the process is
   * closing, and never for deliver jobs, which the next page would find still pending: the next
   * tick tries). Returns how many periods were due in all.
   */
  async tick(): Promise<number> {
    let total = 0;
    for (let page = 1; ; page++) {
      const due = await findDuePeriods(this.resources.db, this.resources.now(), DUE_PERIODS_PAGE);
      await this.toDeliver.hand(due);
      total += due.length;
      if (due.length < DUE_PERIODS_PAGE || page >= MAX_PAGES_A_TICK || !(await this.toDeliver.settled())) return total;
    }
  }
}
