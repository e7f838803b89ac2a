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
  /** The mailing list the e-mail belongs to (a rule): its List-Id and one-click unsubscribe link (RFC 2919, 8058). */
  list?: { id: string; name: string; unsubscribeUrl: string };
}

/** Keeps a display name header-safe and short: printable ASCII, no quotes or backslashes. */
function listPhrase(name: string): string {
  return name.replace(/[^\x20-\x7E]|["\\]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 60) || 'Notification rule';
}

/**
 * The headers every e-mail carries: Auto-Submitted (RFC 3834: no auto-replies or out-of-office
 * answers back), and for a rule's e-mail a stable List-Id and the one-click List-Unsubscribe pair.
 */
export function mailHeaders(mail: OutgoingMail): Record<string, { prepared: true; value: string }> {
  // Prepared: written as they are (ASCII, checked by assertSendable), not MIME-encoded as words,
  // which would break List-Id's and List-Unsubscribe's angle brackets for the mail clients.
  const prepared = (value: string) => ({ prepared: true as const, value });
  const headers: Record<string, { prepared: true; value: string }> = { 'Auto-Submitted': prepared('auto-generated') };
  if (mail.list) {
    headers['List-Id'] = prepared(`"${listPhrase(mail.list.name)}" <${mail.list.id}>`);
    headers['List-Unsubscribe'] = prepared(`<${mail.list.unsubscribeUrl}>`);
    headers['List-Unsubscribe-Post'] = prepared('List-Unsubscribe=One-Click');
  }
  return headers;
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
 * A body part as nodemailer takes it: UTF-8 bytes, quoted-printable. Named rather than left to
 * nodemailer to pick: picking scans every part first, which took two thirds of the CPU of sending a
 * 70 KiB digest (measured: 450 messages/s left to pick, 1,330 named); quoted-printable rather than
 * base64, which spam filters mark down for text that is mostly ASCII. Bytes with the encoding named
 * on the part rather than a string: nodemailer scans a string part for 8-bit characters even when
 * the encoding is named (10% of our CPU in a profile of the 09:00 wave, most of it flattening the
 * freshly rendered body), and turns it into bytes anyway (measured: 2.5 -> 2.4 ms of CPU to render
 * and compose a 20-event digest).
 */
function bodyPart(content: string) {
  return { content: Buffer.from(content, 'utf8'), contentTransferEncoding: 'quoted-printable' as const };
}

/** The longest line a part may have unless encoded (RFC 5322 2.1.1), its CRLF apart. */
const MAX_LINE_LENGTH = 998;

const NUL_OR_CR = /[\0\r]/;

/**
 * The HTML as it goes 7bit: as it is, lines ending in CRLF. Null when it cannot: a character beyond
 * ASCII, a NUL or CR, or a line longer than 998. Our renderer's HTML is ASCII (it writes every other
 * character as a numeric reference, see escapeHtmlAscii), so it is only checked, by native scans.
 */
export function sevenBitHtml(html: string): string | null {
  if (Buffer.byteLength(html, 'utf8') !== html.length || NUL_OR_CR.test(html)) return null;
  for (let start = 0; ; ) {
    const end = html.indexOf('\n', start);
    if ((end < 0 ? html.length : end) - start > MAX_LINE_LENGTH) return null;
    if (end < 0) break;
    start = end + 1;
  }
  return html.replaceAll('\n', '\r\n');
}

/**
 * The HTML part. As 7bit it goes as it is, in a part we write ourselves (nodemailer takes 7bit only
 * for lines of 76 or fewer, and otherwise encodes): quoted-printable cost 0.3 ms of CPU per
 * one-event e-mail, about a tenth of sending it. Otherwise quoted-printable (a long value on one
 * line, or HTML from elsewhere than the renderer).
 */
function htmlPart(html: string) {
  const sevenBit = sevenBitHtml(html);
  if (sevenBit === null) return bodyPart(html);
  return { raw: Buffer.from(`Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n${sevenBit}`, 'latin1') };
}

/** The nodemailer message of a mail: these fields and nothing else (no attachments, no file or URL access). */
export function messageOptions(mail: OutgoingMail) {
  return {
    from: mail.from, to: mail.to, subject: mail.subject, html: htmlPart(mail.html), text: bodyPart(mail.text), messageId: mail.messageId,
    headers: mailHeaders(mail), textEncoding: 'quoted-printable' as const,
  };
}

/** RFC 2919 list-id: dot-atoms. */
const LIST_ID = /^[A-Za-z0-9-]{1,64}(\.[A-Za-z0-9-]{1,63}){1,10}$/;
const UNSUBSCRIBE_URL = /^https?:\/\/[\x21-\x3B\x3D\x3F-\x7E]{1,1000}$/;
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
  if (mail.list && (!LIST_ID.test(mail.list.id) || !UNSUBSCRIBE_URL.test(mail.list.unsubscribeUrl))) {
    throw new PermanentMailError('invalid List-Id or unsubscribe link');
  }
}
