import type { EventDetails, Frequency, Scope, Severity } from '@notify/core';
import { classifySendError, isServerUnavailable, type RenderedMail, type MailRenderer, type MailTransport } from '@notify/mail';
import type { PipelineContext } from '../context';

export interface MailerContext extends PipelineContext {
  renderer: MailRenderer;
  transport: MailTransport;
  from: string;
  /** The domain part of Message-IDs. */
  messageIdDomain: string;
  /**
   * A delivery claimed (`sending`) longer ago than this is taken for abandoned by a dead process and
   * may be claimed again; a younger one is another live mailer's, and is left to it. The job lock's
   * duration: a dead process's job comes back no sooner. Default 30 s.
   */
  claimTimeoutMs?: number;
}

export type SendOutcome =
  | { status: 'sent'; messageId: string }
  | { status: 'skipped'; reason: string }
  | { status: 'cancelled'; reason: string }
  | { status: 'failed'; error: string; permanent: boolean; unavailable?: false }
  /** The SMTP server could not be reached: the delivery waits (pending, its attempt not counted). */
  | { status: 'failed'; error: string; permanent: false; unavailable: true };

/** The most events one e-mail carries in full; its counts cover all of them. */
export const EVENTS_PER_MAIL = 500;

interface DeliveryRow {
  id: string;
  rule_id: string;
  team_member_id: string | null;
  email: string;
  period_key: string;
  attempts: number;
  first_event_at: Date | null;
  rule_name: string;
  scope: Scope;
  frequency: Frequency;
  organization_name: string;
  timezone: string;
  member_name: string | null;
  /** The period's events (the newest `EVENTS_PER_MAIL`), read in the claiming statement. */
  events: EventRow[];
}

/** As json_build_object gives it: the time as text. */
interface EventRow {
  id: string;
  scope: Scope;
  occurred_at: string;
  asset: string;
  asset_type: string | null;
  severity: Severity | null;
  tags: string[] | null;
  title: string;
  summary: string | null;
  url: string | null;
  data: Record<string, unknown> | null;
}

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

/** The e-mail of a claimed delivery, rendered. */
function composeMail(ctx: MailerContext, delivery: DeliveryRow): RenderedMail {
  const mailEvents: EventDetails[] = delivery.events.map((event) => ({
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
  }));
  return ctx.renderer.render({
    organizationName: delivery.organization_name,
    ruleName: delivery.rule_name,
    scope: delivery.scope,
    kind: delivery.frequency === 'instant' ? 'instant' : 'digest',
    frequency: delivery.frequency,
    timeZone: delivery.timezone,
    recipient: { email: delivery.email, name: delivery.member_name },
    events: mailEvents,
  });
}

export function messageIdFor(deliveryId: string, domain: string): string {
  return `<${deliveryId}@${domain}>`;
}

/**
 * Sends one delivery. Claims it first (pending → sending, attempts + 1), so a
 * delivery already sent or cancelled is never sent again, and one being sent is
 * not sent alongside, whichever process or retry asks. The Message-ID is the delivery's own, the same on every attempt.
 * A transient SMTP failure puts it back to pending and throws, for the queue to
 * retry with backoff; `finalAttempt` records it as failed instead. A server that cannot be
 * reached at all is not this message's failure: the delivery goes back to pending with its
 * attempt uncounted, and the caller pauses sending until the server is back.
 */
export async function sendDelivery(ctx: MailerContext, deliveryId: string, options: { finalAttempt?: boolean } = {}): Promise<SendOutcome> {
  const { db } = ctx;
  // One round trip: the claim and, for the claimed delivery only, its period's events.
  const { rows } = await db.pool.query<DeliveryRow>(
    `WITH claimed AS (
       UPDATE deliveries d SET status = 'sending', attempts = d.attempts + 1, updated_at = now()
         FROM notification_rules r, organizations o
        WHERE d.id = $1 AND r.id = d.rule_id AND o.id = r.organization_id
          AND (d.status = 'pending' OR (d.status = 'sending' AND d.updated_at < now() - make_interval(secs => $2::double precision / 1000)))
        RETURNING d.id, d.rule_id, d.team_member_id, d.email, d.period_key, d.attempts, d.first_event_at, r.name AS rule_name, r.scope, r.frequency,
                  o.name AS organization_name, o.timezone,
                  (SELECT t.name FROM team_members t WHERE t.id = d.team_member_id) AS member_name
     )
     SELECT c.*, COALESCE(
              (SELECT json_agg(json_build_object('id', e.id, 'scope', e.scope, 'occurred_at', e.occurred_at, 'asset', e.asset, 'asset_type', e.asset_type,
                                                 'severity', e.severity, 'tags', e.tags, 'title', e.title, 'summary', e.summary, 'url', e.url, 'data', e.data)
                               ORDER BY e.occurred_at DESC, e.id)
                 FROM (SELECT e.* FROM matches m JOIN events e ON e.organization_id = m.organization_id AND e.id = m.event_id
                        WHERE m.rule_id = c.rule_id AND m.period_key = c.period_key AND m.status = 'delivered'
                        ORDER BY e.occurred_at DESC, e.id
                        LIMIT $3) e),
              '[]'::json) AS events
       FROM claimed c`,
    [deliveryId, ctx.claimTimeoutMs ?? 30_000, EVENTS_PER_MAIL],
  );
  const delivery = rows[0];
  // A delivery still being sent elsewhere is skipped too: should that process have died, the
  // reconciler asks again once the claim is old enough to be taken for abandoned.
  if (!delivery) return { status: 'skipped', reason: 'already sent, cancelled or failed, being sent by another mailer, or unknown' };
  if (delivery.team_member_id === null) {
    await db.pool.query(`UPDATE deliveries SET status = 'cancelled', last_error = $2, updated_at = now() WHERE id = $1`, [deliveryId, 'member removed']);
    ctx.metrics?.mailFailed('cancelled', true);
    return { status: 'cancelled', reason: 'member removed' };
  }

  let rendered: RenderedMail;
  try {
    rendered = composeMail(ctx, delivery);
  } catch (error) {
    // Nothing was sent: the next try may claim it at once.
    await db.pool.query(`UPDATE deliveries SET status = 'pending', attempts = attempts - 1, updated_at = now() WHERE id = $1 AND status = 'sending'`, [deliveryId]).catch(() => {});
    throw error;
  }
  const messageId = messageIdFor(delivery.id, ctx.messageIdDomain);
  let acceptedAt: number;
  try {
    await ctx.transport.send({ from: ctx.from, to: delivery.email, subject: rendered.subject, html: rendered.html, text: rendered.text, messageId });
    acceptedAt = Date.now();
  } catch (error) {
    const message = (error as Error).message?.slice(0, 2000) ?? String(error);
    if (isServerUnavailable(error)) {
      await db.pool.query(`UPDATE deliveries SET status = 'pending', attempts = attempts - 1, last_error = $2, updated_at = now() WHERE id = $1`, [deliveryId, message]);
      ctx.metrics?.mailFailed('unavailable', false);
      return { status: 'failed', error: message, permanent: false, unavailable: true };
    }
    const permanent = classifySendError(error) === 'permanent';
    const final = permanent || options.finalAttempt === true;
    await db.pool.query(`UPDATE deliveries SET status = $2, last_error = $3, updated_at = now() WHERE id = $1`, [deliveryId, final ? 'failed' : 'pending', message]);
    ctx.metrics?.mailFailed(permanent ? 'permanent' : 'transient', final);
    return { status: 'failed', error: message, permanent };
  }
  // The server has the e-mail: from here on, failing to record it would send it twice. A database
  // that is away (a restart) is waited for, holding the job (its lock is renewed meanwhile).
  await untilRecorded(() =>
    db.pool.query(
      `UPDATE deliveries SET status = 'sent', message_id = $2, sent_at = now(), last_error = NULL, updated_at = now() WHERE id = $1`,
      [deliveryId, messageId],
    ),
  );
  // Wall-clock time, not ctx.now(): latency is what a recipient waits, whatever the schedule's clock says.
  ctx.metrics?.mailSent(delivery.frequency, delivery.first_event_at ? acceptedAt - delivery.first_event_at.getTime() : null);
  return { status: 'sent', messageId };
}
