import { releaseDeliveries, type ClaimedDelivery, type ClaimsWhenMade } from '@notify/db';
import type { Logger } from '@notify/observability';
import type { PipelineResources } from '../resources';
import { CLAIM_AHEAD, EVENTS_PER_MAIL, type SendStage } from '../send/send-stage';
import { InProcessWork } from './in-process-work';

/**
 * The hand-off to the send stage, for every stage that makes deliveries (match, deliver, a flush,
 * a test send): the deliveries just made go to this process's send stage when it has one and room
 * (the sendInProcess fast path), otherwise to the send queue. Should asking fail (Redis away), the
 * deliveries wait in PostgreSQL and the reconciler asks again; so does it for any a process took
 * and did not send (the process killed).
 */
export interface ToSend {
  /**
   * How many of the deliveries a statement is about to make it may make claimed for this process's
   * send stage (the claimWhenMade fast path): as many as one claim statement takes (CLAIM_AHEAD)
   * and the stage has room for; none without one.
   */
  claims(): ClaimsWhenMade;
  /**
   * Hands deliveries on. `madeClaimed`: those the statement that made them claimed (claims()); any
   * this process does not take is given back (pending) before the queue gets it, as a claimed
   * delivery would be skipped by a job's claim until the claim timeout.
   */
  hand(deliveryIds: readonly string[], madeClaimed?: readonly ClaimedDelivery[]): Promise<void>;
}

const NONE_CLAIMED: ClaimsWhenMade = { claimUpTo: 0, eventLimit: EVENTS_PER_MAIL };

/** Every delivery to the send queue: a process without the send role, or with sendInProcess off. */
export function sendQueue(resources: Pick<PipelineResources, 'queues'>): ToSend {
  return {
    claims: () => NONE_CLAIMED,
    hand: (deliveryIds) => resources.queues.requestSend(deliveryIds),
  };
}

/** The most deliveries waiting or being sent here at once; past it, the send queue takes them. */
export const SEND_HERE_MAX_DELIVERIES = 2000;

export interface SendInProcessOptions {
  /** The claimWhenMade fast path: deliveries are made claimed for this stage (see ToSend.claims). */
  claimWhenMade: boolean;
  log: Logger;
  maxDeliveries?: number;
}

/**
 * The sendInProcess fast path: deliveries this process makes take the mail slots the send jobs
 * share without a job of their own, which for an instant alert cost more (adding, taking and
 * finishing it in Redis, and its round trips before the e-mail) than the rest of its sending. What a
 * job would retry goes to the send queue (SendStage.sendFirstAttempt). Bounded: past
 * SEND_HERE_MAX_DELIVERIES in flight, while sending is paused (the destination away) or once
 * closing, it declines, and the send queue takes them; once closing, those it took and has not
 * started go to the send queue too, for the next process, rather than holding up the stop.
 */
export class SendInProcess extends InProcessWork implements ToSend {
  private deliveries = 0;
  private readonly maxDeliveries: number;

  constructor(
    private readonly resources: Pick<PipelineResources, 'db' | 'queues'>,
    private readonly stage: SendStage,
    private readonly options: SendInProcessOptions,
  ) {
    super();
    this.maxDeliveries = options.maxDeliveries ?? SEND_HERE_MAX_DELIVERIES;
  }

  /** Deliveries taken and not finished yet. */
  get pending(): number {
    return this.deliveries;
  }

  /** How many deliveries it takes now: none when closing or while sending is paused. */
  room(): number {
    return this.closed || this.stage.pause?.active ? 0 : Math.max(0, this.maxDeliveries - this.deliveries);
  }

  claims(): ClaimsWhenMade {
    return this.options.claimWhenMade ? { claimUpTo: Math.min(this.room(), CLAIM_AHEAD), eventLimit: EVENTS_PER_MAIL } : NONE_CLAIMED;
  }

  async hand(deliveryIds: readonly string[], madeClaimed: readonly ClaimedDelivery[] = []): Promise<void> {
    if (!deliveryIds.length) return;
    const claimed = madeClaimed.length ? new Map(madeClaimed.map((delivery) => [delivery.id, delivery])) : undefined;
    // The claimed ones first: what the stage has no room for is better one it would claim itself.
    const ordered = claimed ? [...deliveryIds.filter((id) => claimed.has(id)), ...deliveryIds.filter((id) => !claimed.has(id))] : deliveryIds;
    const declined = this.take(ordered, claimed);
    if (claimed) await releaseDeliveries(this.resources.db, declined.filter((id) => claimed.has(id)));
    await this.resources.queues.requestSend(declined);
  }

  /** Takes what it can of `deliveryIds`; returns those it declines, for the send queue. */
  protected take(deliveryIds: readonly string[], claimed?: ReadonlyMap<string, ClaimedDelivery>): string[] {
    const room = this.room();
    const taken = deliveryIds.slice(0, room);
    if (!taken.length) return [...deliveryIds];
    const count = taken.length;
    this.deliveries += count;
    const { log } = this.options;
    this.start(this.stage.sendFirstAttempt(taken, log, () => this.closed, claimed), {
      done: () => log.debug({ deliveries: count }, 'deliveries sent in process'),
      failed: (error) => log.warn({ err: error, deliveries: count }, 'deliveries not sent in process; the reconciler will ask for them again'),
    }, () => {
      this.deliveries -= count;
    });
    return deliveryIds.slice(room);
  }
}
