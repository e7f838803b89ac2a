import type { Logger } from '@notify/observability';
import type { PipelineResources } from '../resources';
import type { DeliverStage, DuePeriod } from '../deliver/deliver-stage';
import { InProcessWork } from './in-process-work';

/**
 * The hand-off from the schedule stage to the deliver stage: due periods go to this process's
 * deliver stage when it has one and room (the deliverInProcess fast path), otherwise to deliver
 * jobs. Deliver job ids are deterministic and the deliver stage locks the rule, so a period handed
 * on twice, here and by a job, is still one delivery per member.
 */
export interface ToDeliver {
  hand(periods: readonly DuePeriod[]): Promise<void>;
  /**
   * Waits for the periods handed on so far: true when all were delivered and more may be handed
   * (a tick then looks for the next page at once); always false for the queue, whose jobs the next
   * page would find still pending.
   */
  settled(): Promise<boolean>;
}

/** Every due period to a deliver job. */
export function deliverQueue(resources: Pick<PipelineResources, 'queues'>): ToDeliver {
  return {
    hand: (periods) => resources.queues.requestDeliver([...periods], 0),
    settled: async () => false,
  };
}

/** The most due periods waiting or being delivered here at once; past it, the schedule stage asks for deliver jobs. */
export const DELIVER_HERE_MAX_PERIODS = 5000;

const keyOf = (period: DuePeriod) => `${period.ruleId}|${period.periodKey}`;

/**
 * The deliverInProcess fast path: the periods this process's schedule stage finds due go to the
 * transactions deliver jobs share (DeliverStage.deliver) without a job of their own, which in a
 * wave cost more of Redis and of our CPU (adding, taking and finishing a job per period) than the
 * delivery itself. A period already on its way here is not taken twice: the next tick finds it due
 * until it is delivered, and leaves it. Bounded: past DELIVER_HERE_MAX_PERIODS in flight, or once
 * closing, it declines, and `queue` takes them. Nothing is lost by taking periods here: a period
 * this process does not deliver (the database away, the process killed) keeps its pending matches,
 * due, and a later tick (this process's or another's) finds it again.
 */
export class DeliverInProcess extends InProcessWork implements ToDeliver {
  private readonly inFlight = new Set<string>();
  private readonly maxPeriods: number;

  constructor(
    private readonly stage: DeliverStage,
    private readonly queue: ToDeliver,
    private readonly options: { log: Logger; maxPeriods?: number },
  ) {
    super();
    this.maxPeriods = options.maxPeriods ?? DELIVER_HERE_MAX_PERIODS;
  }

  /** Periods taken and not delivered yet. */
  get pending(): number {
    return this.inFlight.size;
  }

  async hand(periods: readonly DuePeriod[]): Promise<void> {
    await this.queue.hand(this.take(periods));
  }

  /** Takes what it can of `periods`; returns those it declines, for deliver jobs. */
  private take(periods: readonly DuePeriod[]): DuePeriod[] {
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
    const { log } = this.options;
    this.start(Promise.all(taken.map((period) => this.stage.deliver(period))), {
      done: () => log.debug({ periods: taken.length }, 'periods delivered in process'),
      failed: (error) => log.warn({ err: error, periods: taken.length }, 'due periods not delivered; the next tick finds them again'),
    }, () => {
      for (const period of taken) this.inFlight.delete(keyOf(period));
    });
    return declined;
  }
}
