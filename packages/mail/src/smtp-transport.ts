import nodemailer from 'nodemailer';
import type { MailTransport, OutgoingMail, SendResult } from './outgoing-mail';
import { assertSendable, messageOptions } from './outgoing-mail';
import { toMailError } from './send-errors';

export interface SmtpTransportOptions {
  /** `smtp://user:pass@host:587` or `smtps://…`; credentials percent-encoded. */
  smtpUrl: string;
  maxConnections?: number;
  /** Connect, greeting and idle-socket timeout. */
  timeoutsMs?: number;
}

/**
 * A pooled transport: servers commonly delay their greeting (smtp-server waits 100 ms to catch
 * clients that talk too early), so reusing open connections is what keeps throughput up.
 */
export function createSmtpTransport(options: SmtpTransportOptions): MailTransport {
  const timeout = options.timeoutsMs ?? 30_000;
  const transporter = nodemailer.createTransport({
    url: options.smtpUrl,
    pool: true,
    maxConnections: options.maxConnections ?? 5,
    // Keep pooled connections for good: each new one costs the server's greeting delay.
    maxMessages: Infinity,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    disableFileAccess: true,
    disableUrlAccess: true,
  });

  return {
    kind: 'smtp',
    async send(mail: OutgoingMail): Promise<SendResult> {
      assertSendable(mail);
      try {
        const info = await transporter.sendMail(messageOptions(mail));
        return { messageId: info.messageId || mail.messageId, response: String(info.response ?? '') };
      } catch (error) {
        throw toMailError(error);
      }
    },
    async verify(): Promise<void> {
      try {
        await transporter.verify();
      } catch (error) {
        throw toMailError(error);
      }
    },
    async close(): Promise<void> {
      transporter.close();
    },
  };
}
