import { randomUUID } from 'node:crypto';
import { access, constants, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MailTransport, OutgoingMail, SendResult } from './outgoing-mail';
import { composeAndSend, type MimeMessage } from './mime-message';
import { toMailError } from './send-errors';

/** `<abc@notify.local>` → `abc@notify.local.eml`; anything unusual in the id becomes `_`. */
export function outboxFileName(messageId: string): string {
  const core = messageId.replace(/^<|>$/g, '').replace(/[^A-Za-z0-9._@-]/g, '_').replace(/^\.+/, '_');
  return `${core.slice(0, 200) || 'message'}.eml`;
}

/**
 * For running without an SMTP server: each message becomes an RFC 822 `.eml` file. Written to a
 * temporary name and renamed, so a reader never sees half a file, and a re-send of the same
 * delivery (same Message-ID) replaces the file instead of adding a second one.
 */
export function createOutboxTransport(options: { outboxDir: string }): MailTransport {
  const dir = options.outboxDir;

  async function sendComposed({ raw }: MimeMessage, messageId: string): Promise<SendResult> {
    const target = join(dir, outboxFileName(messageId));
    const temp = join(dir, `.${randomUUID()}.tmp`);
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(temp, raw, { flush: true });
      await rename(temp, target);
      return { response: `written to ${target}` };
    } catch (error) {
      await rm(temp, { force: true }).catch(() => undefined);
      throw toMailError(error);
    }
  }

  return {
    kind: 'outbox',
    send: (mail: OutgoingMail) => composeAndSend(mail, sendComposed),
    sendComposed,
    async verify(): Promise<void> {
      try {
        await mkdir(dir, { recursive: true });
        await access(dir, constants.W_OK);
      } catch (error) {
        throw toMailError(error);
      }
    },
    async close(): Promise<void> {},
  };
}
