import { unsubscribeToken } from '@notify/core';
import type { ClaimedDelivery } from '@notify/db';
import { classifySendError, isServerUnavailable, recipientBounce, RenderFailedError, type ComposeRequest, type MailComposer, type MailTransport } from '@notify/mail';
import type { Destination, FailureKind } from './destination';

export interface EmailDestinationOptions {
  /** Makes each e-mail's bytes (in the event loop or in threads of its own, see MailComposer). */
  composer: MailComposer;
  transport: MailTransport;
  from: string;
  /** The domain part of Message-IDs (and of List-Ids). */
  messageIdDomain: string;
  /** One-click unsubscribe links (RFC 8058): their signing secret and the address they start with. */
  unsubscribe: { secret: string; baseUrl: string };
}

export function messageIdFor(deliveryId: string, domain: string): string {
  return `<${deliveryId}@${domain}>`;
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

/** The e-mail destination: an MJML e-mail per delivery, through SMTP or into the outbox folder. */
export function emailDestination(options: EmailDestinationOptions): Destination {
  const { composer, transport, from, messageIdDomain, unsubscribe } = options;
  return {
    kind: transport.kind,
    messageIdOf: (delivery) => messageIdFor(delivery.id, messageIdDomain),
    // Not async, so no suspended frame keeps the composed e-mail (tens of KB) until the server has
    // it and its record is written: held that long, it outlives young-generation collections and
    // is promoted to the old one.
    start(delivery, messageId) {
      // One link for the footer and the List-Unsubscribe header.
      const unsubscribeUrl = `${unsubscribe.baseUrl}/${unsubscribeToken(unsubscribe.secret, delivery.rule_id, delivery.team_member_id!)}`;
      const request: ComposeRequest = {
        content: mailContent(delivery),
        events: delivery.events,
        eventCount: delivery.events_shown,
        recipient: { email: delivery.email, name: delivery.member_name },
        unsubscribeUrl,
        shareKey: shareKeyOf(delivery),
        headers: {
          from, to: delivery.email, messageId,
          list: { id: `${delivery.rule_id}.rules.${messageIdDomain}`, name: delivery.rule_name, unsubscribeUrl },
        },
      };
      return composer.compose(request).then((message) => transport.sendComposed(message, messageId));
    },
    classify(error): FailureKind {
      if (error instanceof RenderFailedError) return { kind: 'unsent' };
      if (isServerUnavailable(error)) return { kind: 'unavailable' };
      const kind = classifySendError(error) === 'permanent' ? 'permanent' : 'transient';
      // Refused for good at RCPT TO: the address bounces.
      const bounce = recipientBounce(error);
      return bounce ? { kind, bounce } : { kind };
    },
    verify: () => transport.verify(),
    async close() {
      await transport.close().catch(() => {});
      await composer.close().catch(() => {});
    },
  };
}
