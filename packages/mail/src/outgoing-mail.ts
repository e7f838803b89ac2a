import { hasControlCharacter, isValidEmail } from '@notify/core/basics';
import type { MimeMessage } from './mime-message';
import { PermanentMailError } from './send-errors';

export interface OutgoingMail {
  from: string;
  /** One plain address, no display name. */
  to: string;
  subject: string;
  html: string;
  text: string;
  /** Unique per delivery, e.g. `<delivery-uuid@notify.local>`; the outbox names its file after it. */
  messageId: string;
  /** The mailing list the e-mail belongs to (a rule): its List-Id and one-click unsubscribe link (RFC 2919, 8058). */
  list?: { id: string; name: string; unsubscribeUrl: string };
}

/** What the server (or the outbox) said; the message goes under the mail's own Message-ID. */
export interface SendResult {
  response: string;
}

export interface MailTransport {
  readonly kind: 'smtp' | 'outbox';
  /** Throws TransientMailError or PermanentMailError. */
  send(mail: OutgoingMail): Promise<SendResult>;
  /** Sends a message composed already (composeMessage, a MailComposer) under its Message-ID; throws as send does. */
  sendComposed(message: MimeMessage, messageId: string): Promise<SendResult>;
  verify(): Promise<void>;
  close(): Promise<void>;
}

/** RFC 2919 list-id: dot-atoms. */
const LIST_ID = /^[A-Za-z0-9-]{1,64}(\.[A-Za-z0-9-]{1,63}){1,10}$/;
/** Short enough for its header line to stay within 998 characters (RFC 5322 2.1.1): a URL is not folded. */
const UNSUBSCRIBE_URL = /^https?:\/\/[\x21-\x3B\x3D\x3F-\x7E]{1,960}$/;
const MESSAGE_ID = /^<[\x21-\x3B\x3D\x3F-\x7E]{1,200}@[\x21-\x3B\x3D\x3F-\x7E]{1,200}>$/;

/**
 * composeMessage encodes the subject and the sender's name, but an address list or a CR/LF in what
 * should be one recipient would still change who gets the message, so anything but one plain
 * address is refused before sending; the other headers are written as they are, so they are checked.
 */
export function assertSendable(mail: OutgoingMail): void {
  if (typeof mail.to !== 'string' || !isValidEmail(mail.to)) {
    throw new PermanentMailError(`invalid recipient address: ${JSON.stringify(String(mail.to).slice(0, 100))}`);
  }
  // One address, no group or list: composeMessage parses it.
  if (typeof mail.from !== 'string' || mail.from.length === 0 || hasControlCharacter(mail.from)) {
    throw new PermanentMailError('invalid sender address');
  }
  if (typeof mail.messageId !== 'string' || !MESSAGE_ID.test(mail.messageId)) {
    throw new PermanentMailError(`invalid Message-ID: ${JSON.stringify(String(mail.messageId).slice(0, 100))}`);
  }
  if (typeof mail.subject !== 'string' || hasControlCharacter(mail.subject)) {
    throw new PermanentMailError('subject must be a single line');
  }
  if (mail.list && (!LIST_ID.test(mail.list.id) || !UNSUBSCRIBE_URL.test(mail.list.unsubscribeUrl))) {
    throw new PermanentMailError('invalid List-Id or unsubscribe link');
  }
}
