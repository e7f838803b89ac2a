import { createOutboxTransport } from './outbox-transport';
import type { MailTransport } from './outgoing-mail';
import { createSmtpTransport } from './smtp-transport';

export interface MailTransportOptions {
  /** Unset or empty: messages go to the outbox folder instead. */
  smtpUrl?: string;
  outboxDir: string;
  maxConnections?: number;
  timeoutsMs?: number;
  /** DKIM signing of SMTP messages (the outbox, for development, writes them unsigned). */
  dkim?: { domainName: string; keySelector: string; privateKey: string };
}

export function createMailTransport(options: MailTransportOptions): MailTransport {
  const smtpUrl = options.smtpUrl?.trim();
  if (smtpUrl) {
    return createSmtpTransport({ smtpUrl, maxConnections: options.maxConnections, timeoutsMs: options.timeoutsMs, dkim: options.dkim });
  }
  return createOutboxTransport({ outboxDir: options.outboxDir });
}
