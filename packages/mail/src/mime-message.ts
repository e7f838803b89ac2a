import { randomUUID } from 'node:crypto';
import addressparser from 'nodemailer/lib/addressparser';
import { encodeWord, encodeWords, foldLines, quoteString } from 'nodemailer/lib/mime-funcs';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';
import type { OutgoingMail, SendResult } from './outgoing-mail';
import { assertSendable } from './outgoing-mail';
import { markCrlfOnly } from './dot-stuffing';
import { PermanentMailError, toMailError } from './send-errors';

/**
 * A message as it goes on the wire: the SMTP envelope and the RFC 5322 bytes, CRLF lines, every
 * byte ASCII (headers as MIME encoded words, bodies 7bit or quoted-printable). The bytes of one
 * composed in this process are marked so (markCrlfOnly), which makes their dot-stuffing cheap.
 *
 * Composed here rather than by nodemailer: its MailComposer builds a tree of MIME nodes per
 * message (random boundaries, header objects, a stream pipeline per part) and took about half of
 * our CPU per e-mail in the SMTP client (measured against handing nodemailer the same message as
 * `raw`: see commit d8518e2). Encoding still uses nodemailer's own functions (encoded words,
 * folding, quoted-printable), so the bytes read as they did.
 */
export interface MimeMessage {
  envelope: { from: string; to: string[] };
  raw: Buffer;
}

/** The longest line a part may have unless encoded (RFC 5322 2.1.1), its CRLF apart. */
const MAX_LINE_LENGTH = 998;

/**
 * A body as it goes 7bit: lines ending in CRLF, LF-only lines given their CR. Null when it cannot:
 * a character beyond ASCII, a NUL, a CR that does not end a line, mixed endings, or a line longer
 * than 998. The renderer's HTML is ASCII with CRLF lines (see escapeHtmlAscii), so it goes as it
 * is, after native scans only (the first of them flattens the rendered string, once); its text is
 * usually ASCII, with LF lines.
 */
export function sevenBitBody(body: string): string | null {
  if (body.indexOf('\0') >= 0 || Buffer.byteLength(body, 'utf8') !== body.length) return null;
  const crlf = body.indexOf('\r') >= 0;
  let lines = 0;
  for (let start = 0; ; lines++) {
    const end = body.indexOf('\n', start);
    const stop = end < 0 ? body.length : end;
    if (stop - start > MAX_LINE_LENGTH + (crlf && end >= 0 ? 1 : 0)) return null;
    if (end < 0) break;
    if (crlf && body.charCodeAt(end - 1) !== 13) return null;
    start = end + 1;
  }
  if (!crlf) return body.replaceAll('\n', '\r\n');
  // Every LF has its CR; a CR anywhere else makes more CRs than lines.
  let crs = 0;
  for (let at = body.indexOf('\r'); at >= 0; at = body.indexOf('\r', at + 1)) crs++;
  return crs === lines ? body : null;
}

/**
 * A line quoted-printable encodes to itself: printable ASCII but "=", no space or tab at its end
 * (those are encoded). Whether wrap then leaves it whole is its length's business (quotedPrintable).
 */
const QP_AS_IS = /^(?:[\x20-\x3c\x3e-\x7e]*[\x21-\x3c\x3e-\x7e])?$/;

/** nodemailer's quoted-printable: encoded, then soft-wrapped to lines of 76. */
const nodemailerQuotedPrintable = (text: string): string => qpWrap(qpEncode(Buffer.from(text, 'utf8')), 76);

/**
 * A line (no CR or LF in it) as nodemailer's encode writes it followed by a CRLF: printable ASCII
 * but "=" as it is; "=", a control character and every byte of a character beyond ASCII as =XX;
 * a space or tab that ends the line as =XX too.
 */
function quotedPrintableLine(line: string): string {
  let out = '';
  let literalFrom = 0;
  const last = line.length - 1;
  for (let i = 0; i <= last; i++) {
    const code = line.charCodeAt(i);
    if ((code >= 0x21 && code <= 0x7e && code !== 0x3d) || ((code === 0x20 || code === 0x09) && i < last)) continue;
    out += line.slice(literalFrom, i);
    if (code < 0x80) {
      out += HEX_BYTES[code];
      literalFrom = i + 1;
      continue;
    }
    // A run of characters beyond ASCII: a surrogate pair stays whole (a lone surrogate is written
    // as U+FFFD, as Buffer.from writes it for nodemailer).
    let end = i + 1;
    while (end <= last && line.charCodeAt(end) >= 0x80) end++;
    for (const byte of Buffer.from(line.slice(i, end), 'utf8')) out += HEX_BYTES[byte];
    i = end - 1;
    literalFrom = end;
  }
  return out + line.slice(literalFrom);
}

/** Each byte value's =XX. */
const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => `=${byte.toString(16).toUpperCase().padStart(2, '0')}`);

/**
 * A body that cannot go 7bit, as quoted-printable: UTF-8 bytes, CRLF hard breaks, lines of 76 at
 * most; the bytes nodemailer's encode and wrap make of the whole body (held to them by a property
 * test in mime-message.test.ts). Line by line: wrap starts afresh after every CRLF (a piece it cuts
 * ends at the first CRLF in it), and encode looks no further ahead than the next byte, so a line
 * encoded here and wrapped alone comes out as within the body; a line of 74 or fewer after encoding
 * is left as it is by wrap, which looks 76 characters ahead and sees its CRLF. A text part is mostly
 * short lines, as they are or with a "·" or "•" in them: nodemailer's byte loop over all of it, for
 * a few such characters, cost a Buffer, a scan and a string each time.
 */
export function quotedPrintable(body: string): string {
  const text = body.replace(/\r\n|\r|\n/g, '\r\n');
  const lines = text.split('\r\n');
  // A last line without its CRLF would be wrapped against the end of the body: rare (the
  // templates end in a line break), so the body goes whole then.
  if (lines[lines.length - 1] !== '' || text.length <= 76) return nodemailerQuotedPrintable(text);
  let out = '';
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i]!;
    const encoded = QP_AS_IS.test(line) ? line : quotedPrintableLine(line);
    out += encoded.length <= 74 ? `${encoded}\r\n` : qpWrap(`${encoded}\r\n`, 76);
  }
  return out;
}

/** One part of the multipart/alternative body: its headers with the blank line after them, and its encoded content. */
function bodyPart(type: 'text/plain' | 'text/html', body: string): { head: string; content: string } {
  const sevenBit = sevenBitBody(body);
  const encoding = sevenBit === null ? 'quoted-printable' : '7bit';
  return { head: `Content-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: ${encoding}\r\n\r\n`, content: sevenBit ?? quotedPrintable(body) };
}

/** Keeps a display name header-safe and short: printable ASCII, no quotes or backslashes. */
function listPhrase(name: string): string {
  return name.replace(/[^\x20-\x7E]|["\\]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 60) || 'Notification rule';
}

interface Sender {
  /** The From header's value: the display name quoted or MIME-encoded as nodemailer would. */
  header: string;
  /** The envelope's MAIL FROM. */
  address: string;
}

/**
 * A sender's address: ASCII, no quotes, brackets or spaces; the domain may be a bare host
 * (`alerts@localhost`, MAIL_FROM's default), unlike a recipient's.
 */
const SENDER_ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;

/** MAIL_FROM is one setting, so each distinct From is parsed once. */
const senders = new Map<string, Sender>();

/** `Name <address>` or `address`: one plain ASCII address, a display name in any script. */
function sender(from: string): Sender {
  const known = senders.get(from);
  if (known) return known;
  const addresses = addressparser(from);
  const address = addresses.length === 1 ? addresses[0]?.address : undefined;
  if (address === undefined || !SENDER_ADDRESS.test(address)) throw new PermanentMailError('invalid sender address');
  const name = (addresses[0]?.name ?? '').trim();
  // As nodemailer's MimeNode writes a name: word characters as they are, other printable ASCII
  // quoted, anything else as an encoded word.
  const phrase = /^[\w ]*$/.test(name) ? name : /^[\x20-\x7e]*$/.test(name) ? quoteString(name) : encodeWord(name, 'Q', 52);
  const parsed = { header: phrase ? `${phrase} <${address}>` : address, address };
  if (senders.size > 100) senders.clear();
  senders.set(from, parsed);
  return parsed;
}

/**
 * The address a From (`MAIL_FROM`) sends as, for the envelope and the Message-ID's domain. Throws
 * PermanentMailError when the From is not one plain address, so a process can refuse to start
 * with it rather than fail every e-mail.
 */
export function senderAddress(from: string): string {
  return sender(from).address;
}

/** The Date header's form: `Wed, 25 Nov 2026 20:20:24 +0000`. */
function dateHeader(date: Date): string {
  return date.toUTCString().replace(/GMT$/, '+0000');
}

/**
 * The message of a mail, checked first (assertSendable). The headers every e-mail carries besides
 * the usual ones: Auto-Submitted (RFC 3834: no auto-replies or out-of-office answers back), and for
 * a rule's e-mail a stable List-Id and the one-click List-Unsubscribe pair (RFC 2919, 8058).
 */
export function composeMessage(mail: OutgoingMail, date: Date = new Date()): MimeMessage {
  assertSendable(mail);
  const from = sender(mail.from);
  const text = bodyPart('text/plain', mail.text);
  const html = bodyPart('text/html', mail.html);
  // A quoted-printable part cannot hold "=_" (every "=" is encoded); a 7bit part could hold
  // anything, so the boundary is checked against both.
  let boundary = `=_notify_${randomUUID()}`;
  while (text.content.includes(boundary) || html.content.includes(boundary)) boundary = `=_notify_${randomUUID()}`;

  const headers = [
    `From: ${from.header}`,
    `To: ${mail.to}`,
    foldLines(`Subject: ${encodeWords(mail.subject, 'Q', 52, true)}`, 76),
    `Message-ID: ${mail.messageId}`,
    `Date: ${dateHeader(date)}`,
    'MIME-Version: 1.0',
    'Auto-Submitted: auto-generated',
  ];
  if (mail.list) {
    headers.push(
      `List-Id: "${listPhrase(mail.list.name)}" <${mail.list.id}>`,
      `List-Unsubscribe: <${mail.list.unsubscribeUrl}>`,
      'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    );
  }
  headers.push(`Content-Type: multipart/alternative;\r\n boundary="${boundary}"`);
  const pieces = [
    `${headers.join('\r\n')}\r\n\r\n--${boundary}\r\n${text.head}`,
    text.content,
    `\r\n--${boundary}\r\n${html.head}`,
    html.content,
    `\r\n--${boundary}--\r\n`,
  ];
  // Every character is ASCII by now, so latin1 writes each byte for byte. The pieces go into the
  // bytes one by one: joined into one string first, the message was copied whole twice more (V8
  // flattens a joined string before reading it), a noticeable share of composing a digest and of
  // what our process allocated in a wave of digests (measured: see commit 9b24cc8).
  let length = 0;
  for (const piece of pieces) length += piece.length;
  const raw = Buffer.allocUnsafe(length);
  let at = 0;
  for (const piece of pieces) at += raw.write(piece, at, 'latin1');
  // CRLF lines only: the headers hold no control character (assertSendable, listPhrase), a 7bit
  // body has CRLF lines (sevenBitBody) and a quoted-printable one encodes every other CR and LF.
  return { envelope: { from: from.address, to: [mail.to] }, raw: markCrlfOnly(raw) };
}

/**
 * A transport's `send` of a mail: composed (a failure rejected as the mail error it is), then sent
 * as bytes (the transport's `sendComposed`). Not async: the mail (its HTML and text, tens of KB) is
 * composed here and held by nothing while the server takes its bytes, rather than by a suspended
 * frame until it has.
 */
export function composeAndSend(mail: OutgoingMail, sendComposed: (message: MimeMessage, messageId: string) => Promise<SendResult>): Promise<SendResult> {
  let message: MimeMessage;
  try {
    message = composeMessage(mail);
  } catch (error) {
    return Promise.reject(toMailError(error));
  }
  return sendComposed(message, mail.messageId);
}
