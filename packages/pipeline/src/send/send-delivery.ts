import { unsubscribeToken, type EventDetails } from '@notify/core';
import { cancelDelivery, claimDeliveries, markBouncing, markDeliveriesSent, suppressDelivery, postponeDelivery, recordFailedAttempt, releaseDelivery, type ClaimedDelivery, type DeliveryEvent } from '@notify/db';
import { classifySendError, isServerUnavailable, recipientBounce, RenderFailedError, type ComposeRequest, type MailComposer, type MailTransport } from '@notify/mail';
import { Batcher } from '../batcher';
import { Slots } from '../slots';
import type { PipelineContext } from '../context';

export interface SendContext extends PipelineContext {
  /** Makes each e-mail's bytes (in the event loop or in threads of its own, see MailComposer). */
  composer: MailComposer;
  transport: MailTransport;
  from: string;
  /** The domain part of Message-IDs (and of List-Ids). */
  messageIdDomain: string;
  /** One-click unsubscribe links (RFC 8058): their signing secret and the address they start with. */
  unsubscribe: { secret: string; baseUrl: string };
  /**
   * A delivery claimed (`sending`) longer ago than this is taken for abandoned by a dead process and
   * may be claimed again; a younger one is another live sender's, and is left to it. The job lock's
   * duration: a dead process's job comes back no sooner. Default 30 s.
   */
  claimTimeoutMs?: number;
}

export type SendOutcome =
  | { status: 'sent'; messageId: string }
  | { status: 'skipped'; reason: string }
  | { status: 'cancelled'; reason: string }
  /** The member's address bounces: recorded suppressed, nothing sent. */
  | { status: 'suppressed' }
  | { status: 'failed'; error: string; permanent: boolean; unavailable?: false }
  /** The SMTP server could not be reached: the delivery waits (pending, its attempt not counted). */
  | { status: 'failed'; error: string; permanent: false; unavailable: true };

/** The most events one e-mail carries in full; its counts cover all of them. */
export const EVENTS_PER_MAIL = 500;

/** How long a sent e-mail's record is retried before the job gives up (and the e-mail may go again). */
export const RECORD_SENT_PATIENCE_MS = 15 * 60_000;

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
 * What a sender (a send context: a process's send role) keeps across its sends. The claims and "sent"
 * records of its concurrent sends, each batch in one statement (see Batcher): with MAIL_CONCURRENCY
 * e-mails in flight, up to that many claims share a round trip to PostgreSQL.
 */
interface Sender {
  claims: Batcher<string, ClaimedDelivery | undefined>;
  sent: Batcher<{ deliveryId: string; messageId: string }, null>;
  /**
   * Deliveries this sender has claimed and not finished with: sent and being recorded, say, while
   * PostgreSQL is away. Their claims age meanwhile, and once PostgreSQL is back the reconciler asks
   * for them again (a job of its own, `send.<delivery>`), whose claim would take them for abandoned
   * and send them a second time before the first sender's record got through. Asked for again
   * here, they are skipped: their sender is alive and finishes them. A sender in another process
   * cannot see this set: there the claim timeout alone decides, and after an outage of PostgreSQL
   * longer than it, an e-mail whose record was held up may go twice (same Message-ID).
   */
  inProcess: Set<string>;
}

const MAX_BATCH = 50;
/**
 * One statement of each kind at a time: under load the claims and records that come while one runs
 * all share the next (counted in the 09:00 wave: 29,194 statements for 20,000 e-mails with two at a
 * time, 18,513 with one), and an idle sender waits for nothing.
 */
const BATCH_OPTIONS = { maxBatch: MAX_BATCH, concurrency: 1 };
/**
 * A "sent" record waits this long for others to share its statement: nobody waits on it (the
 * e-mail is the server's, its slot given up: sendDeliveries), and a statement of 3 or 4 records,
 * as e-mails finishing one by one made them, cost PostgreSQL and us about three times as much a
 * record as one of 16 (measured on the same database, alternated). It widens by as much the
 * window in which a process killed after the server's accept leaves an e-mail to be sent again.
 */
const RECORD_LINGER_MS = 10;
const senders = new WeakMap<SendContext, Sender>();

function senderOf(ctx: SendContext): Sender {
  const known = senders.get(ctx);
  if (known) return known;
  const claimTimeoutMs = ctx.claimTimeoutMs ?? 30_000;
  const sender: Sender = {
    claims: new Batcher(async (ids) => {
      const claimed = await claimDeliveries(ctx.db, ids, claimTimeoutMs, EVENTS_PER_MAIL);
      // A delivery asked for twice in one batch is claimed once: the second asker sees it taken, as it would alone.
      return ids.map((id) => {
        const delivery = claimed.get(id);
        claimed.delete(id);
        return delivery;
      });
    }, BATCH_OPTIONS),
    sent: new Batcher(async (rows) => {
      await markDeliveriesSent(ctx.db, rows);
      return rows.map(() => null);
    }, { ...BATCH_OPTIONS, lingerMs: RECORD_LINGER_MS }),
    inProcess: new Set(),
  };
  senders.set(ctx, sender);
  return sender;
}

/** The page where a member opts out of a rule. */
function unsubscribeUrlOf(ctx: SendContext, ruleId: string, memberId: string): string {
  return `${ctx.unsubscribe.baseUrl}/${unsubscribeToken(ctx.unsubscribe.secret, ruleId, memberId)}`;
}

/** An event as the database hands it to an e-mail, as the renderer reads it. */
export function mailEventOf(event: DeliveryEvent): EventDetails {
  return {
    id: event.id,
    scope: event.scope,
    occurredAt: new Date(event.occurred_at),
    asset: event.asset,
    assetType: event.asset_type,
    severity: event.severity,
    tags: event.tags ?? [],
    title: event.title,
    summary: event.summary,
    url: event.url,
    data: event.data,
  };
}

/**
 * The key of what a delivery's e-mail shows besides its member's name and unsubscribe link: the
 * members of a rule who get the same events of a period in the same zone get the same e-mail
 * otherwise (their deliveries are made, claimed and sent together), which the composer renders
 * once for all of them (SharedRenders). Events are stored once and never change, so their ids
 * stand for them. A test send is one member's own.
 */
function shareKeyOf(delivery: ClaimedDelivery): string | null {
  if (delivery.test) return null;
  const { rule_id, period_key, timezone, repeats, frequency, scope, rule_name, organization_name, event_ids } = delivery;
  return JSON.stringify([rule_id, period_key, timezone, repeats, frequency, scope, rule_name, organization_name, event_ids]);
}

/** What a claimed delivery's e-mail shows, but for its member's own parts and its events (left as the claim's JSON: ComposeRequest.events). */
function mailContent(delivery: ClaimedDelivery): ComposeRequest['content'] {
  return {
    organizationName: delivery.organization_name,
    ruleName: delivery.rule_name,
    scope: delivery.scope,
    // A test send shows its one event as an instant alert would, whatever the rule's frequency.
    kind: delivery.test || delivery.frequency === 'instant' ? 'instant' : 'digest',
    test: delivery.test,
    frequency: delivery.frequency,
    timeZone: delivery.timezone,
    repeats: delivery.repeats,
  };
}

export function messageIdFor(deliveryId: string, domain: string): string {
  return `<${deliveryId}@${domain}>`;
}

/**
 * Sends one delivery, as sendDeliveries sends a list of one, outside the process's slots (tests, and
 * callers that bound nothing): its outcome.
 */
export async function sendDelivery(ctx: SendContext, deliveryId: string, options: { finalAttempt?: boolean } = {}): Promise<SendOutcome> {
  const { outcomes } = await sendDeliveries(ctx, [deliveryId], { slots: new Slots(1), finalAttempt: options.finalAttempt === true });
  // A list of one always starts: nothing before it found the server away.
  return outcomes[0]!;
}

/** How many deliveries of a list sendDeliveries claims in one go, ahead of their turn. */
export const CLAIM_AHEAD = 16;

export interface SendManyOptions {
  /** The process's e-mails in flight (MAIL_CONCURRENCY), shared by every list it sends. */
  slots: Slots;
  finalAttempt: boolean;
  /** Asked before each delivery's turn: true once nothing more should start (the process is shutting down). */
  stopping?: () => boolean;
  /** Told each delivery's outcome as it comes. */
  onOutcome?: (deliveryId: string, outcome: SendOutcome) => void;
  /**
   * Deliveries of the list already claimed for this sender (by the statement that made them:
   * ClaimsWhenMade), as a claim would answer them: taken as claimed at the call, so a
   * turn that waits too long gives them back as it would its own claims.
   */
  claimed?: ReadonlyMap<string, ClaimedDelivery>;
}

export interface SendManyResult {
  /** In the order of the ids; undefined for a delivery that did not start (the server away, or stopping), left pending. */
  outcomes: Array<SendOutcome | undefined>;
  /** Why the SMTP server could not be reached, when it could not: the deliveries after it did not start. */
  unreachable?: string;
  sent: number;
}

/**
 * Sends a list of deliveries (a send job's, or those this process made), at most `slots` e-mails at
 * once in the process. Each is claimed first (pending → sending, attempts + 1), unless the statement
 * that made it claimed it for this sender (`claimed`), so a delivery already sent or cancelled is
 * never sent again, and one being sent is not sent alongside, whichever process or retry asks;
 * the Message-ID is the delivery's own, the same on every attempt. A failed attempt is recorded
 * (pending again for a transient failure, failed for a permanent one or `finalAttempt`); a server
 * that cannot be reached at all is not the message's failure: the delivery goes back to
 * pending with its attempt uncounted, the deliveries after it do not start, and the caller pauses
 * sending until the server is back.
 *
 * Claims go ahead of the e-mails, CLAIM_AHEAD deliveries of the list in one statement, rather than
 * one delivery's as its slot frees (3 or 4 a statement in the 09:00 wave, for a claim that costs a
 * round trip more than its rows); an e-mail gives its slot up once the server has it, and its record
 * is written with the others of the moment (RECORD_LINGER_MS). A delivery claimed ahead waits for a
 * slot as long as the e-mails before it take; one that waits a third of the claim timeout is put
 * back (pending) and claimed again at its turn, so its claim never looks abandoned to another
 * sender meanwhile. Once the server cannot be reached, or `stopping` says so, the deliveries
 * claimed ahead and not started go back to pending, their attempt uncounted.
 */
export async function sendDeliveries(ctx: SendContext, deliveryIds: readonly string[], options: SendManyOptions): Promise<SendManyResult> {
  const sender = senderOf(ctx);
  const claimedAt = Date.now();
  const claimTimeoutMs = ctx.claimTimeoutMs ?? 30_000;
  /** Claims made ahead and not started yet, by delivery: when asked for, and once put back, the putting back. */
  const ahead = new Map<string, { claim: Promise<ClaimedDelivery | undefined>; at: number; putBack?: Promise<void> }>();
  let claimedTo = 0;
  /** Puts back (pending, the attempt uncounted) a delivery claimed ahead; it never fails: one left sending is asked for again once its claim is old enough. */
  const putBack = async (deliveryId: string, claim: Promise<ClaimedDelivery | undefined>) => {
    try {
      if (await claim) await releaseDelivery(ctx.db, deliveryId);
    } catch {
      // Left sending: the reconciler asks again once the claim is old enough.
    }
  };
  // A claim that waited a third of the timeout for its turn goes back (found by a sweep as often,
  // started once a claim is made ahead of its turn): it is claimed again at its turn, and is never
  // old enough meanwhile for another sender to take it for abandoned.
  const staleAfterMs = claimTimeoutMs / 3;
  let sweep: NodeJS.Timeout | undefined;
  const startSweep = () => {
    sweep ??= setInterval(() => {
      for (const [deliveryId, entry] of ahead) {
        if (!entry.putBack && Date.now() - entry.at > staleAfterMs) entry.putBack = putBack(deliveryId, entry.claim);
      }
    }, staleAfterMs);
  };
  // Those made claimed for this sender are in hand from the start, as claims made ahead of their
  // turn: put back like them if their turn comes late or never (the server away, the process
  // stopping), rather than left sending until the claim timeout.
  if (options.claimed?.size) {
    for (const id of deliveryIds) {
      const made = options.claimed.get(id);
      if (!made || sender.inProcess.has(id)) continue;
      sender.inProcess.add(id);
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
      if (sender.inProcess.has(id)) continue;
      sender.inProcess.add(id);
      // A failed claim is this delivery's outcome, when its turn comes.
      const claim = sender.claims.submit(id);
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
        options.slots.run(async (release): Promise<SendOutcome | undefined> => {
          if (unreachable !== undefined || options.stopping?.()) return undefined;
          if (i >= claimedTo) claimAhead(i);
          const mine = ahead.get(deliveryId);
          if (!mine) return { status: 'skipped', reason: 'being sent by this process' };
          ahead.delete(deliveryId);
          // Each e-mail starts on a claim younger than a third of the timeout, as one claimed at its turn would.
          if (!mine.putBack && Date.now() - mine.at > staleAfterMs) mine.putBack = putBack(deliveryId, mine.claim);
          let outcome: SendOutcome;
          try {
            const delivery = await (mine.putBack ? mine.putBack.then(() => sender.claims.submit(deliveryId)) : mine.claim);
            outcome = await sendClaimed(ctx, sender, deliveryId, delivery, { finalAttempt: options.finalAttempt, release });
          } finally {
            sender.inProcess.delete(deliveryId);
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
      sender.inProcess.delete(deliveryId);
    }),
  );
  // A delivery that failed otherwise than by its outcome (its claim, the database away) fails the list, as it would alone.
  const failure = settled.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  const outcomes = settled.map((result) => (result.status === 'fulfilled' ? result.value : undefined));
  return { outcomes, unreachable, sent: outcomes.filter((outcome) => outcome?.status === 'sent').length };
}

/**
 * A claimed delivery's e-mail, composed (MailComposer) and handed to the transport: the promise of
 * its sending (RenderFailedError when rendering failed, nothing sent). Not async, so no suspended
 * frame keeps the composed e-mail (tens of KB) until the server has it and its record is written:
 * held that long, past two young-generation collections, it was copied and promoted to the old one
 * (the 09:00 wave promoted 728 MB with it, 278 MB without).
 */
function startSending(ctx: SendContext, delivery: ClaimedDelivery, memberId: string, messageId: string): Promise<unknown> {
  // One link for the footer and the List-Unsubscribe header.
  const unsubscribeUrl = unsubscribeUrlOf(ctx, delivery.rule_id, memberId);
  const request: ComposeRequest = {
    content: mailContent(delivery),
    events: delivery.events,
    eventCount: delivery.events_shown,
    recipient: { email: delivery.email, name: delivery.member_name },
    unsubscribeUrl,
    shareKey: shareKeyOf(delivery),
    headers: {
      from: ctx.from, to: delivery.email, messageId,
      list: { id: `${delivery.rule_id}.rules.${ctx.messageIdDomain}`, name: delivery.rule_name, unsubscribeUrl },
    },
  };
  return ctx.composer.compose(request).then((message) => ctx.transport.sendComposed(message, messageId));
}

/**
 * What follows a claim: a delivery not claimed is skipped; the claimed one is sent (or cancelled,
 * suppressed) and its outcome recorded. `release` is called once the server has the e-mail,
 * before its record.
 */
async function sendClaimed(
  ctx: SendContext,
  sender: Sender,
  deliveryId: string,
  delivery: ClaimedDelivery | undefined,
  options: { finalAttempt: boolean; release: () => void },
): Promise<SendOutcome> {
  const { db } = ctx;
  // A delivery still being sent elsewhere is skipped too: should that process have died, the
  // reconciler asks again once the claim is old enough to be taken for abandoned.
  if (!delivery) return { status: 'skipped', reason: 'already sent, cancelled or failed, being sent by another sender, or unknown' };
  if (delivery.team_member_id === null) {
    await cancelDelivery(db, deliveryId, 'member removed');
    ctx.metrics?.mailFailed('cancelled', true);
    return { status: 'cancelled', reason: 'member removed' };
  }
  if (delivery.bouncing) {
    await suppressDelivery(db, deliveryId);
    ctx.metrics?.mailFailed('suppressed', true);
    return { status: 'suppressed' };
  }

  const messageId = messageIdFor(delivery.id, ctx.messageIdDomain);
  let acceptedAt: number;
  try {
    await startSending(ctx, delivery, delivery.team_member_id, messageId);
    acceptedAt = Date.now();
    options.release();
  } catch (error) {
    if (error instanceof RenderFailedError) {
      // Nothing was sent: the next try may claim it at once.
      await releaseDelivery(db, deliveryId).catch(() => {});
      throw error;
    }
    const message = (error as Error).message?.slice(0, 2000) ?? String(error);
    if (isServerUnavailable(error)) {
      await postponeDelivery(db, deliveryId, message);
      ctx.metrics?.mailFailed('unavailable', false);
      return { status: 'failed', error: message, permanent: false, unavailable: true };
    }
    const permanent = classifySendError(error) === 'permanent';
    const final = permanent || options.finalAttempt;
    await recordFailedAttempt(db, deliveryId, final, message);
    // Refused for good at RCPT TO: the address bounces, and later e-mails to it are suppressed.
    const bounce = recipientBounce(error);
    if (bounce) await markBouncing(db, delivery.team_member_id, bounce);
    ctx.metrics?.mailFailed(permanent ? 'permanent' : 'transient', final);
    return { status: 'failed', error: message, permanent };
  }
  // The server has the e-mail: from here on, failing to record it would send it twice. A database
  // that is away (a restart) is waited for, holding the job (its lock is renewed meanwhile).
  await untilRecorded(() => sender.sent.submit({ deliveryId, messageId }));
  // Wall-clock time, not ctx.now(): latency is what a recipient waits, whatever the schedule's clock says.
  ctx.metrics?.mailSent(delivery.frequency, delivery.first_event_at ? acceptedAt - delivery.first_event_at.getTime() : null);
  return { status: 'sent', messageId };
}
