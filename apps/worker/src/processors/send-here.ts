import type { ClaimedDelivery } from '@notify/db';
import type { Logger } from '@notify/observability';
import type { OutagePause } from '@notify/pipeline';
import { InProcessWork } from './in-process-work';

/** The most deliveries waiting or being sent here at once; past it, the send queue takes them. */
export const SEND_HERE_MAX_DELIVERIES = 2000;

/**
 * Sending of the deliveries this process makes (an instant rule's first match, a due period, a
 * flush), when it runs the send role too: they take the mail slots the send jobs share without a job
 * of their own, which for an instant alert cost more (adding, taking and finishing it in Redis, and
 * its round trips before the e-mail) than the rest of its sending. What a job would retry goes to the
 * send queue (the processors' `send`). Bounded: past SEND_HERE_MAX_DELIVERIES in flight, while
 * sending is paused (the SMTP server away) or once closing, it declines, and the send queue takes
 * them as before; once closing, those it took and has not started go to the send queue too, for the
 * next process, rather than holding up the stop. Nothing is lost by taking deliveries here: they are
 * stored before, claimed only when their e-mail goes, and any this process does not send (the
 * process killed) stay pending in PostgreSQL, where the reconciler finds them after its grace and
 * asks for them again.
 */
export class InProcessSending extends InProcessWork {
  private deliveries = 0;

  constructor(
    private readonly send: (deliveryIds: readonly string[], log: Logger, stopping: () => boolean, claimed?: ReadonlyMap<string, ClaimedDelivery>) => Promise<void>,
    private readonly logger: Logger,
    private readonly pause: Pick<OutagePause, 'active'> | undefined,
    private readonly maxDeliveries = SEND_HERE_MAX_DELIVERIES,
  ) {
    super();
  }

  /** Deliveries taken and not finished yet. */
  get pending(): number {
    return this.deliveries;
  }

  /** How many deliveries it takes now: none when closing or while sending is paused. */
  readonly room = (): number => (this.closed || this.pause?.active ? 0 : Math.max(0, this.maxDeliveries - this.deliveries));

  /**
   * Takes what it can of `deliveryIds`; returns those it declines, for the send queue. `claimed`:
   * those of them made claimed for this sender, sent without a claim of their own (SendHere).
   */
  readonly take = (deliveryIds: readonly string[], claimed?: ReadonlyMap<string, ClaimedDelivery>): string[] => {
    const room = this.room();
    const taken = deliveryIds.slice(0, room);
    if (!taken.length) return [...deliveryIds];
    const count = taken.length;
    this.deliveries += count;
    this.start(this.send(taken, this.logger, () => this.closed, claimed), {
      done: () => this.logger.debug({ deliveries: count }, 'deliveries sent in process'),
      failed: (error) => this.logger.warn({ err: error, deliveries: count }, 'deliveries not sent in process; the reconciler will ask for them again'),
    }, () => {
      this.deliveries -= count;
    });
    return deliveryIds.slice(room);
  };
}
