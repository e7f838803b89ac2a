import type { EventDetails } from '@notify/core';
import type { MailContent, MailRenderer, RenderedMail, SharedMail } from './mail-content';
import { composeMessage, type MimeMessage } from './mime-message';
import type { OutgoingMail } from './outgoing-mail';
import { toMailError } from './send-errors';

/** One recipient's e-mail to compose: what it shows, whom it goes to, and its headers. */
export interface ComposeRequest {
  /** What the e-mail shows but for its recipient's own parts and its events. */
  content: Omit<MailContent, 'recipient' | 'unsubscribeUrl' | 'events'>;
  /**
   * Its events as JSON text, an array of EventDetails with each `occurredAt` as epoch milliseconds
   * (as the claim reads them) or as text (a test send's stored event): parsed where the e-mail is
   * rendered, and only there (a thread's, not the caller's loop; not for the further members of a
   * shared render).
   */
  events: string;
  /** How many events `events` holds. */
  eventCount: number;
  recipient: { email: string; name: string | null };
  unsubscribeUrl: string;
  /**
   * The content's key (the same for every recipient of the same content: a rule's members get the
   * same events of a period in the same zone), or null for an e-mail rendered for its recipient
   * alone (a test send).
   */
  shareKey: string | null;
  /** The headers: from, to (the recipient's address), Message-ID, list. */
  headers: Omit<OutgoingMail, 'subject' | 'html' | 'text'>;
}

/**
 * The render failed (a template or view bug, not the message's fault): nothing was sent, and the
 * delivery may be tried again at once. A composing failure (an address that cannot be sent to, say)
 * is a mail error instead (PermanentMailError, TransientMailError), as the transport's own.
 */
export class RenderFailedError extends Error {
  override name = 'RenderFailedError';
}

/** How many contents (rule, period, events) a composer remembers, for the other members of their rule and period. */
const SHARED_MAILS = 32;

/**
 * Renders requests, sharing the render of a content among its recipients: the first recipient's
 * e-mail of a content is rendered for them alone, as most rules have one member; a second one's makes
 * the render shared (MailRenderer.renderShared), which every further recipient's only fills: two
 * renders for a rule's members, however many they are.
 */
export class SharedRenders {
  /** By share key, the last SHARED_MAILS: the e-mail rendered for any recipient, or null when one recipient's was rendered alone. */
  private readonly shared = new Map<string, SharedMail | null>();

  constructor(private readonly renderer: MailRenderer) {}

  render(request: ComposeRequest): RenderedMail {
    const { content, recipient, unsubscribeUrl, shareKey } = request;
    const own = () => this.renderer.render({ ...content, events: eventsFromJson(request.events), recipient, unsubscribeUrl });
    if (shareKey === null) return own();
    let mail = this.shared.get(shareKey);
    if (mail === undefined) {
      this.shared.set(shareKey, null);
      // The oldest goes: its recipients' e-mails were composed together, before this one's.
      if (this.shared.size > SHARED_MAILS) this.shared.delete(this.shared.keys().next().value!);
      return own();
    }
    if (mail === null) this.shared.set(shareKey, (mail = this.renderer.renderShared({ ...content, events: eventsFromJson(request.events) })));
    return mail.for({ name: recipient.name, unsubscribeUrl });
  }
}

/** A request's events (ComposeRequest.events), each time a Date. */
export function eventsFromJson(json: string): EventDetails[] {
  const events = JSON.parse(json) as Array<Omit<EventDetails, 'occurredAt'> & { occurredAt: Date | number | string }>;
  for (const event of events) event.occurredAt = new Date(event.occurredAt);
  return events as EventDetails[];
}

/**
 * A request's message: rendered (RenderFailedError when that fails), then composed into its bytes
 * (a mail error when that fails, as the transport would say).
 */
export function composeRequest(renders: SharedRenders, request: ComposeRequest): MimeMessage {
  let rendered: RenderedMail;
  try {
    rendered = renders.render(request);
  } catch (error) {
    throw new RenderFailedError(`rendering failed: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
  try {
    return composeMessage({ ...request.headers, subject: rendered.subject, html: rendered.html, text: rendered.text });
  } catch (error) {
    throw toMailError(error);
  }
}

/**
 * Makes e-mails' bytes from what they show: in the process's event loop (composeInLoop) or in
 * threads of their own (composeInThreads), which keep rendering and encoding, most of a digest's CPU,
 * off the loop that talks to PostgreSQL, Redis and the SMTP server.
 */
export interface MailComposer {
  /** Rejects with RenderFailedError when rendering fails, with a mail error when composing does. */
  compose(request: ComposeRequest): Promise<MimeMessage>;
  close(): Promise<void>;
}

/** Composes in the caller's event loop. */
export function composeInLoop(renderer: MailRenderer): MailComposer {
  const renders = new SharedRenders(renderer);
  return {
    compose(request) {
      try {
        return Promise.resolve(composeRequest(renders, request));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    async close() {},
  };
}
