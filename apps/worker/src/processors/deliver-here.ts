import type { DeliveringHere, DuePeriod } from '@notify/pipeline';
import type { Logger } from '@notify/observability';
import { InProcessWork } from './in-process-work';

/** The most due periods waiting or being delivered here at once; past it, the schedule stage asks for deliver jobs. */
export const DELIVER_HERE_MAX_PERIODS = 5000;

const keyOf = (period: DuePeriod) => `${period.ruleId}|${period.periodKey}`;

/**
 * Delivery of the periods this process's schedule stage finds due, when it runs the deliver role
 * too: they go to the transactions deliver jobs share (the deliver processor's batcher) without a
 * job of their own. In the 09:00 wave, a job per (rule, period) cost more of Redis and of our CPU
 * (adding, taking and finishing 20,000 jobs) than the delivery itself. A period already on its way
 * here is not taken twice: the next tick finds it due until it is delivered, and leaves it. Bounded:
 * past DELIVER_HERE_MAX_PERIODS in flight, or once closing, it declines, and the schedule stage asks
 * for deliver jobs as before. Nothing is lost by taking periods here: a period this process does not
 * deliver (the database away, the process killed) keeps its pending matches, due, and a later tick
 * (this process's or another's) finds it again. Two processes that deliver the same period make one
 * delivery per member: the rule's row lock and the delivered matches see to it (deliverPeriods).
 */
export class InProcessDelivery extends InProcessWork implements DeliveringHere {
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly deliver: (periods: readonly DuePeriod[]) => Promise<void>,
    private readonly logger: Logger,
    private readonly maxPeriods = DELIVER_HERE_MAX_PERIODS,
  ) {
    super();
  }

  /** Periods taken and not delivered yet. */
  get pending(): number {
    return this.inFlight.size;
  }

  /** Takes what it can of `periods`; returns those it declines, for deliver jobs. */
  readonly take = (periods: readonly DuePeriod[]): DuePeriod[] => {
    if (this.closed) return [...periods];
    const taken: DuePeriod[] = [];
    const declined: DuePeriod[] = [];
    for (const period of periods) {
      const key = keyOf(period);
      if (this.inFlight.has(key)) continue;
      if (this.inFlight.size >= this.maxPeriods) {
        declined.push(period);
        continue;
      }
      this.inFlight.add(key);
      taken.push(period);
    }
    if (!taken.length) return declined;
    this.start(this.deliver(taken), {
      done: () => this.logger.debug({ periods: taken.length }, 'periods delivered in process'),
      failed: (error) => this.logger.warn({ err: error, periods: taken.length }, 'due periods not delivered; the next tick finds them again'),
    }, () => {
      for (const period of taken) this.inFlight.delete(keyOf(period));
    });
    return declined;
  };
}
