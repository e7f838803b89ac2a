import { cancelDelivery, claimDeliveries, markBouncing, markDeliveriesSent, suppressDelivery, postponeDelivery, recordFailedAttempt, releaseDelivery, type ClaimedDelivery } from '@notify/db';
import type { Logger } from '@notify/observability';
import { Batcher } from '../batcher';
import { Slots } from '../slots';
import type { PipelineResources } from '../resources';
import type { Destination } from './destination';
import { OutagePause } from './outage-pause';

export type SendOutcome =
  | { status: 'sent'; messageId: string }
  | { status: 'skipped'; reason: string }
  | { status: 'cancelled'; reason: string }
  /** The member's address bounces: recorded suppressed, nothing sent. */
  | { status: 'suppressed' }
  | { status: 'failed'; error: string; permanent: boolean; unavailable?: false }
  /** The destination could not be reached: the delivery waits (pending, its attempt not counted). */
  | { status: 'failed'; error: string; permanent: false; unavailable: true };

/** The most events one e-mail carries in full; its counts cover all of them. */
export const EVENTS_PER_MAIL = 500;

/** How many deliveries of a list the send stage claims in one go, ahead of their turn. */
export const CLAIM_AHEAD = 16;

/** How long a sent message's record is retried before the job gives up (and the message may go again). */
export const RECORD_SENT_PATIENCE_MS = 15 * 60_000;

const MAX_BATCH = 50;
/**
 * One statement of each kind at a time: under load the claims and records that come while one runs
 * all share the next, and an idle sender waits for nothing.
 */
const BATCH_OPTIONS = { maxBatch: MAX_BATCH, concurrency: 1 };
/**
 * A "sent" record waits this long for others to share its statement: nobody waits on it (the
 * message is the destination's, its slot given up), and a statement of a few records costs
 * PostgreSQL and us several times as much a record as one of a dozen or more. It widens by as much
 * the window in which a process killed after the destination's accept leaves a message to be sent again.
 */
const RECORD_LINGER_MS = 10;

export interface SendStageOptions {
  destination: Destination;
  /**
   * A delivery claimed (`sending`) longer ago than this is taken for abandoned by a dead process and
   * may be claimed again; a younger one is another live sender's, and is left to it. The job lock's
   * duration: a dead process's job comes back no sooner. Default 30 s.
   */
  claimTimeoutMs?: number;
  /** Messages in flight at once in the process, over every list it sends (MAIL_CONCURRENCY). Default 20. */
  concurrency?: number;
  /** While the destination cannot be reached, the send queue pauses (for every sender) instead of spending retries. */
  pause?: OutagePause;
}

export interface SendManyOptions {
  finalAttempt: boolean;
  /** Asked before each delivery's turn: true once nothing more should start (the process is shutting down). */
  stopping?: () => boolean;
  /** Told each delivery's outcome as it comes. */
  onOutcome?: (deliveryId: string, outcome: SendOutcome) => void;
  /**
   * Deliveries of the list already claimed for this sender (by the statement that made them:
   * the claimWhenMade fast path), as a claim would answer them: taken as claimed at the call, so
   * a turn that waits too long gives them back as it would its own claims.
   */
  claimed?: ReadonlyMap<string, ClaimedDelivery>;
}

export interface SendManyResult {
  /** In the order of the ids; undefined for a delivery that did not start (the destination away, or stopping), left pending. */
  outcomes: Array<SendOutcome | undefined>;
  /** Why the destination could not be reached, when it could not: the deliveries after it did not start. */
  unreachable?: string;
  sent: number;
}

async function untilRecorded(record: () => Promise<unknown>, patienceMs = RECORD_SENT_PATIENCE_MS): Promise<void> {
  const giveUpAt = Date.now() + patienceMs;
  for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 5000)) {
    try {
      await record();
      return;
    } catch (error) {
      if (Date.now() + waitMs > giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

/**
 * The send stage: claims deliveries, hands each to the destination, records the outcome. It owns
 * what its sends share: the claim and "sent" statements of concurrent sends, each batch in one
 * statement (Batcher); the process's slots (messages in flight); the outage pause; and the
 * deliveries it has claimed and not finished with.
 */
export class SendStage {
  readonly destination: Destination;
  readonly pause: OutagePause | undefined;
  readonly claimTimeoutMs: number;
  private readonly slots: Slots;
  private readonly claims: Batcher<string, ClaimedDelivery | undefined>;
  private readonly sent: Batcher<{ deliveryId: string; messageId: string }, null>;
  /**
   * Deliveries this stage has claimed and not finished with: sent and being recorded, say, while
   * PostgreSQL is away. Their claims age meanwhile, and once PostgreSQL is back the reconciler asks
   * for them again (a job of its own, `send.<delivery>`), whose claim would take them for abandoned
   * and send them a second time before this stage's record got through. Asked for again here, they
   * are skipped: their sender is alive and finishes them. A sender in another process cannot see
   * this set: there the claim timeout alone decides, and after an outage of PostgreSQL longer than
   * it, a message whose record was held up may go twice (same Message-ID).
   */
  private readonly inProcess = new Set<string>();

  constructor(private readonly resources: PipelineResources, options: SendStageOptions) {
    this.destination = options.destination;
    this.pause = options.pause;
    this.claimTimeoutMs = options.claimTimeoutMs ?? 30_000;
    this.slots = new Slots(options.concurrency ?? 20);
    const { db } = resources;
    this.claims = new Batcher(async (ids) => {
      const claimed = await claimDeliveries(db, ids, this.claimTimeoutMs, EVENTS_PER_MAIL);
      // A delivery asked for twice in one batch is claimed once: the second asker sees it taken, as it would alone.
      return ids.map((id) => {
        const delivery = claimed.get(id);
        claimed.delete(id);
        return delivery;
      });
    }, BATCH_OPTIONS);
    this.sent = new Batcher(async (rows) => {
      await markDeliveriesSent(db, rows);
      return rows.map(() => null);
    }, { ...BATCH_OPTIONS, lingerMs: RECORD_LINGER_MS });
  }

  /** Sends one delivery, as sendMany sends a list of one, outside the process's slots (tests, and callers that bound nothing): its outcome. */
  async sendOne(deliveryId: string, options: { finalAttempt?: boolean } = {}): Promise<SendOutcome> {
    const { outcomes } = await this.sendList([deliveryId], { finalAttempt: options.finalAttempt === true }, new Slots(1));
    // A list of one always starts: nothing before it found the destination away.
    return outcomes[0]!;
  }

  /**
   * Sends a list of deliveries (a send job's, or those this process made), at most `concurrency`
   * messages at once in the process. Each is claimed first (pending → sending, attempts + 1), unless
   * the statement that made it claimed it for this sender (`claimed`), so a delivery already sent or
   * cancelled is never sent again, and one being sent is not sent alongside, whichever process or
   * retry asks; the message id is the delivery's own, the same on every attempt. A failed attempt is
   * recorded (pending again for a transient failure, failed for a permanent one or `finalAttempt`);
   * a destination that cannot be reached at all is not the message's failure: the delivery goes
   * back to pending with its attempt uncounted, the deliveries after it do not start, and the caller
   * pauses sending until the destination is back.
   *
   * Claims go ahead of the messages, CLAIM_AHEAD deliveries of the list in one statement, rather
   * than one delivery's as its slot frees (a claim costs a round trip more than its rows); a
   * message gives its slot up once the destination has it, and its record is written with the
   * others of the moment (RECORD_LINGER_MS). A delivery claimed ahead waits for a slot as long as
   * the messages before it take; one that waits a third of the claim timeout is put back (pending)
   * and claimed again at its turn, so its claim never looks abandoned to another sender meanwhile.
   * Once the destination cannot be reached, or `stopping` says so, the deliveries claimed ahead and
   * not started go back to pending, their attempt uncounted.
   */
  sendMany(deliveryIds: readonly string[], options: SendManyOptions): Promise<SendManyResult> {
    return this.sendList(deliveryIds, options, this.slots);
  }

  /**
   * A send job's deliveries, logged one by one: the outcome of each, and whether the destination
   * could be reached. A destination that took a message is back, and ends a pause (unless another
   * of these found it away since).
   */
  async sendForJob(deliveryIds: readonly string[], finalAttempt: boolean, log: Logger, stopping?: () => boolean, claimed?: ReadonlyMap<string, ClaimedDelivery>): Promise<SendManyResult> {
    const result = await this.sendMany(deliveryIds, {
      finalAttempt,
      stopping,
      claimed,
      onOutcome: (deliveryId, outcome) => {
        if (outcome.status === 'sent') log.info({ delivery_id: deliveryId, message_id: outcome.messageId }, 'e-mail sent');
        else if (outcome.status === 'cancelled') log.info({ delivery_id: deliveryId, reason: outcome.reason }, 'e-mail cancelled');
        else if (outcome.status === 'skipped') log.debug({ delivery_id: deliveryId, reason: outcome.reason }, 'e-mail skipped');
      },
    });
    if (result.unreachable === undefined && result.sent && this.pause?.active) {
      this.pause.reset();
      log.info('SMTP server available again: mail resumed');
    }
    return result;
  }

  /** Pauses the send queue for every sender (queue.rateLimit) while the destination cannot be reached. */
  async pauseSending(error: string, log: Logger): Promise<void> {
    if (!this.pause) return;
    const pause = this.pause.next();
    if (pause.started) log.warn({ pause_ms: pause.ms, error }, 'SMTP server unavailable: mail paused');
    await this.resources.queues.send.rateLimit(pause.ms);
  }

  /**
   * The first attempt of deliveries made in this process (the sendInProcess fast path), as a send
   * job's would be, with what follows it handed to the send queue: a transient failure (recorded) to
   * a job of its own that waits the first backoff and has the attempts left; an unreachable
   * destination's waiting deliveries to jobs, with the queue paused, as a job's would be; and once
   * `stopping` (the process shutting down), those not started yet to jobs, for the next process.
   */
  async sendFirstAttempt(deliveryIds: readonly string[], log: Logger, stopping: () => boolean, claimed?: ReadonlyMap<string, ClaimedDelivery>): Promise<void> {
    const { queues } = this.resources;
    const { outcomes, unreachable } = await this.sendForJob(deliveryIds, queues.sendPolicy.attempts <= 1, log, stopping, claimed);
    const waiting = deliveryIds.filter((_, i) => {
      const outcome = outcomes[i];
      return outcome === undefined || (outcome.status === 'failed' && outcome.unavailable === true);
    });
    const retry = deliveryIds.filter((_, i) => {
      const outcome = outcomes[i];
      return outcome?.status === 'failed' && !outcome.permanent && !outcome.unavailable && queues.sendPolicy.attempts > 1;
    });
    if (unreachable !== undefined) await this.pauseSending(unreachable, log);
    await queues.requestSend(waiting);
    await queues.requestSend(retry, { afterFirstAttempt: true });
  }

  private async sendList(deliveryIds: readonly string[], options: SendManyOptions, slots: Slots): Promise<SendManyResult> {
    const { db } = this.resources;
    const claimedAt = Date.now();
    /** Claims made ahead and not started yet, by delivery: when asked for, and once put back, the putting back. */
    const ahead = new Map<string, { claim: Promise<ClaimedDelivery | undefined>; at: number; putBack?: Promise<void> }>();
    let claimedTo = 0;
    /** Puts back (pending, the attempt uncounted) a delivery claimed ahead; it never fails: one left sending is asked for again once its claim is old enough. */
    const putBack = async (deliveryId: string, claim: Promise<ClaimedDelivery | undefined>) => {
      try {
        if (await claim) await releaseDelivery(db, deliveryId);
      } catch {
        // Left sending: the reconciler asks again once the claim is old enough.
      }
    };
    // A claim that waited a third of the timeout for its turn goes back (found by a sweep as often,
    // started once a claim is made ahead of its turn): it is claimed again at its turn, and is never
    // old enough meanwhile for another sender to take it for abandoned.
    const staleAfterMs = this.claimTimeoutMs / 3;
    let sweep: NodeJS.Timeout | undefined;
    const startSweep = () => {
      sweep ??= setInterval(() => {
        for (const [deliveryId, entry] of ahead) {
          if (!entry.putBack && Date.now() - entry.at > staleAfterMs) entry.putBack = putBack(deliveryId, entry.claim);
        }
      }, staleAfterMs);
    };
    // Those made claimed for this sender are in hand from the start, as claims made ahead of their
    // turn: put back like them if their turn comes late or never (the destination away, the process
    // stopping), rather than left sending until the claim timeout.
    if (options.claimed?.size) {
      for (const id of deliveryIds) {
        const made = options.claimed.get(id);
        if (!made || this.inProcess.has(id)) continue;
        this.inProcess.add(id);
        ahead.set(id, { claim: Promise.resolve(made), at: claimedAt });
      }
      if (ahead.size) startSweep();
    }
    /** Claims the deliveries from the one whose turn it is (the first not claimed yet) to CLAIM_AHEAD of them. */
    const claimAhead = (from: number) => {
      claimedTo = Math.min(deliveryIds.length, from + CLAIM_AHEAD);
      for (let i = from; i < claimedTo; i++) {
        const id = deliveryIds[i]!;
        // Another list of this process has it (or this one twice, or it came claimed): its turn here is skipped.
        if (this.inProcess.has(id)) continue;
        this.inProcess.add(id);
        // A failed claim is this delivery's outcome, when its turn comes.
        const claim = this.claims.submit(id);
        claim.catch(() => {});
        ahead.set(id, { claim, at: Date.now() });
      }
      if (claimedTo > from + 1) startSweep();
    };
    let unreachable: string | undefined;
    let settled: Array<PromiseSettledResult<SendOutcome | undefined>>;
    try {
      settled = await Promise.allSettled(
        deliveryIds.map((deliveryId, i) =>
          slots.run(async (release): Promise<SendOutcome | undefined> => {
            if (unreachable !== undefined || options.stopping?.()) return undefined;
            if (i >= claimedTo) claimAhead(i);
            const mine = ahead.get(deliveryId);
            if (!mine) return { status: 'skipped', reason: 'being sent by this process' };
            ahead.delete(deliveryId);
            // Each message starts on a claim younger than a third of the timeout, as one claimed at its turn would.
            if (!mine.putBack && Date.now() - mine.at > staleAfterMs) mine.putBack = putBack(deliveryId, mine.claim);
            let outcome: SendOutcome;
            try {
              const delivery = await (mine.putBack ? mine.putBack.then(() => this.claims.submit(deliveryId)) : mine.claim);
              outcome = await this.sendClaimed(deliveryId, delivery, { finalAttempt: options.finalAttempt, release });
            } finally {
              this.inProcess.delete(deliveryId);
            }
            if (outcome.status === 'failed' && outcome.unavailable) unreachable ??= outcome.error;
            options.onOutcome?.(deliveryId, outcome);
            return outcome;
          }),
        ),
      );
    } finally {
      clearInterval(sweep);
    }
    // Claimed ahead of a turn that never started: back to pending, as if never claimed.
    await Promise.all(
      [...ahead].map(async ([deliveryId, entry]) => {
        await (entry.putBack ?? putBack(deliveryId, entry.claim));
        this.inProcess.delete(deliveryId);
      }),
    );
    // A delivery that failed otherwise than by its outcome (its claim, the database away) fails the list, as it would alone.
    const failure = settled.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    const outcomes = settled.map((result) => (result.status === 'fulfilled' ? result.value : undefined));
    return { outcomes, unreachable, sent: outcomes.filter((outcome) => outcome?.status === 'sent').length };
  }

  /**
   * What follows a claim: a delivery not claimed is skipped; the claimed one is sent (or cancelled,
   * suppressed) and its outcome recorded. `release` is called once the destination has the
   * message, before its record.
   */
  private async sendClaimed(deliveryId: string, delivery: ClaimedDelivery | undefined, options: { finalAttempt: boolean; release: () => void }): Promise<SendOutcome> {
    const { db, metrics } = this.resources;
    // A delivery still being sent elsewhere is skipped too: should that process have died, the
    // reconciler asks again once the claim is old enough to be taken for abandoned.
    if (!delivery) return { status: 'skipped', reason: 'already sent, cancelled or failed, being sent by another sender, or unknown' };
    if (delivery.team_member_id === null) {
      await cancelDelivery(db, deliveryId, 'member removed');
      metrics?.mailFailed('cancelled', true);
      return { status: 'cancelled', reason: 'member removed' };
    }
    if (delivery.bouncing) {
      await suppressDelivery(db, deliveryId);
      metrics?.mailFailed('suppressed', true);
      return { status: 'suppressed' };
    }

    const messageId = this.destination.messageIdOf(delivery);
    let acceptedAt: number;
    try {
      await this.destination.start(delivery, messageId);
      acceptedAt = Date.now();
      options.release();
    } catch (error) {
      const failure = this.destination.classify(error);
      if (failure.kind === 'unsent') {
        // Nothing was sent: the next try may claim it at once.
        await releaseDelivery(db, deliveryId).catch(() => {});
        throw error;
      }
      const message = (error as Error).message?.slice(0, 2000) ?? String(error);
      if (failure.kind === 'unavailable') {
        await postponeDelivery(db, deliveryId, message);
        metrics?.mailFailed('unavailable', false);
        return { status: 'failed', error: message, permanent: false, unavailable: true };
      }
      const permanent = failure.kind === 'permanent';
      const final = permanent || options.finalAttempt;
      await recordFailedAttempt(db, deliveryId, final, message);
      if (failure.bounce) await markBouncing(db, delivery.team_member_id, failure.bounce);
      metrics?.mailFailed(permanent ? 'permanent' : 'transient', final);
      return { status: 'failed', error: message, permanent };
    }
    // The destination has the message: from here on, failing to record it would send it twice. A
    // database that is away (a restart) is waited for, holding the job (its lock is renewed meanwhile).
    await untilRecorded(() => this.sent.submit({ deliveryId, messageId }));
    // Wall-clock time, not the resources' clock: latency is what a recipient waits, whatever the schedule's clock says.
    metrics?.mailSent(delivery.frequency, delivery.first_event_at ? acceptedAt - delivery.first_event_at.getTime() : null);
    return { status: 'sent', messageId };
  }
}
