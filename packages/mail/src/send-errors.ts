import { causeChain } from '@notify/core/basics';
export type SendErrorKind = 'transient' | 'permanent';

/** Worth retrying later: the server or the network said "not now". */
export class TransientMailError extends Error {
  readonly kind = 'transient' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransientMailError';
  }
}

/** Retrying would get the same answer: record it and show it to operators. */
export class PermanentMailError extends Error {
  readonly kind = 'permanent' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentMailError';
  }
}

/**
 * Connection-level codes: the server could not be reached or talked to at all, so every other
 * message would fail the same way. Credentials and TLS count too (the server's configuration).
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ESOCKET',
  'ECONNECTION',
  'EDNS',
  'ETLS',
  'EPROXY',
  'EAUTH',
  'ENOAUTH',
]);

/** Worth another try: the server could not be reached, or the conversation broke off. */
const TRANSIENT_CODES = new Set([...UNAVAILABLE_CODES, 'EPROTOCOL', 'EMAXLIMIT', 'EABORT']);

const PERMANENT_CODES = new Set(['EENVELOPE', 'EMESSAGE', 'EMAXRECIPIENTS']);

function field(error: object, key: string): unknown {
  return (error as Record<string, unknown>)[key];
}

/**
 * SMTP 4xx and connection trouble are transient; 5xx and a refused envelope or message are
 * permanent. Anything unrecognised counts as transient: a bounded retry costs less than a lost alert.
 */
export function classifySendError(error: unknown): SendErrorKind {
  if (error instanceof TransientMailError || error instanceof PermanentMailError) return error.kind;
  if (typeof error !== 'object' || error === null) return 'transient';
  const code = field(error, 'code');
  const responseCode = field(error, 'responseCode');
  // Before the reply code: a refused login (535) or STARTTLS (a server that cannot encrypt while
  // SMTP_URL requires it) is the server's configuration, not this message's fault.
  if (typeof code === 'string' && (code === 'EAUTH' || code === 'ENOAUTH' || code === 'ETLS')) return 'transient';
  if (typeof responseCode === 'number') {
    if (responseCode >= 400 && responseCode < 500) return 'transient';
    if (responseCode >= 500 && responseCode < 600) return 'permanent';
  }
  const originalCode = field(error, 'originalCode');
  if (typeof originalCode === 'string' && TRANSIENT_CODES.has(originalCode)) return 'transient';
  if (typeof code === 'string') {
    if (TRANSIENT_CODES.has(code)) return 'transient';
    if (PERMANENT_CODES.has(code)) return 'permanent';
  }
  return 'transient';
}



/**
 * Whether a failed send says the SMTP server is unavailable (refused, unreachable, timed out,
 * "421 service not available"), as opposed to a verdict on this one message (451, 550). An
 * outage is no reason to spend the message's retries: the send role pauses instead.
 */
export function isServerUnavailable(error: unknown): boolean {
  for (const current of causeChain(error)) {
    if (current.responseCode === 421) return true;
    if (typeof current.responseCode === 'number') return false;
    for (const code of [current.originalCode, current.code]) if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  }
  return false;
}

/** Wraps any failure of a send in the class its classification calls for. */
export function toMailError(error: unknown): TransientMailError | PermanentMailError {
  if (error instanceof TransientMailError || error instanceof PermanentMailError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return classifySendError(error) === 'transient'
    ? new TransientMailError(message, { cause: error })
    : new PermanentMailError(message, { cause: error });
}

/** How much of a bounce's reply is kept for operators. */
const BOUNCE_REPLY_MAX = 300;

/**
 * The server's reply when it refused the recipient for good at RCPT TO (550, 551 or 553, or an
 * enhanced status 5.1.x: no such mailbox, bad address): the address bounces, and sending to it
 * again would only hurt the sender's reputation. Null for any other failure.
 */
export function recipientBounce(error: unknown): string | null {
  for (const current of causeChain(error)) {
    if (current.command !== 'RCPT TO' || typeof current.responseCode !== 'number') continue;
    const response = typeof current.response === 'string' ? current.response.slice(0, 1000) : '';
    const enhanced = /(?:^|\s)5\.1\.\d{1,3}(?:\s|$)/.test(response);
    if ([550, 551, 553].includes(current.responseCode) || enhanced) return (response || String(current.responseCode)).slice(0, BOUNCE_REPLY_MAX);
  }
  return null;
}
