import { hasControlCharacter, isValidEmail } from '@notify/core';
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
}

export interface SendResult {
  messageId: string;
  response: string;
}

export interface MailTransport {
  readonly kind: 'smtp' | 'outbox';
  /** Throws TransientMailError or PermanentMailError. */
  send(mail: OutgoingMail): Promise<SendResult>;
  verify(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The nodemailer message of a mail: these fields and nothing else (no attachments, no file or URL
 * access). Quoted-printable is named rather than left to nodemailer to pick: picking scans every
 * part first, which took two thirds of the CPU of sending a 70 KiB digest (measured: 450 messages/s
 * left to pick, 1,330 named); quoted-printable rather than base64, which spam filters mark down for
 * text that is mostly ASCII.
 */
export function messageOptions(mail: OutgoingMail) {
  return { from: mail.from, to: mail.to, subject: mail.subject, html: mail.html, text: mail.text, messageId: mail.messageId, textEncoding: 'quoted-printable' as const };
}

const MESSAGE_ID = /^<[\x21-\x3B\x3D\x3F-\x7E]{1,200}@[\x21-\x3B\x3D\x3F-\x7E]{1,200}>$/;

/**
 * Nodemailer encodes headers, but an address list or a CR/LF in what should be one recipient would
 * still change who gets the message, so anything but one plain address is refused before sending.
 */
export function assertSendable(mail: OutgoingMail): void {
  if (typeof mail.to !== 'string' || !isValidEmail(mail.to)) {
    throw new PermanentMailError(`invalid recipient address: ${JSON.stringify(String(mail.to).slice(0, 100))}`);
  }
  if (typeof mail.from !== 'string' || mail.from.length === 0 || hasControlCharacter(mail.from) || mail.from.includes(',')) {
    throw new PermanentMailError('invalid sender address');
  }
  if (typeof mail.messageId !== 'string' || !MESSAGE_ID.test(mail.messageId)) {
    throw new PermanentMailError(`invalid Message-ID: ${JSON.stringify(String(mail.messageId).slice(0, 100))}`);
  }
  if (typeof mail.subject !== 'string' || hasControlCharacter(mail.subject)) {
    throw new PermanentMailError('subject must be a single line');
  }
}
