import { Readable } from 'node:stream';
import DKIM from 'nodemailer/lib/dkim';
import SMTPPool from 'nodemailer/lib/smtp-pool';
import type { MailTransport, OutgoingMail, SendResult } from './outgoing-mail';
import { installFastDotStuffing } from './dot-stuffing';
import { composeAndSend, type MimeMessage } from './mime-message';
import { toMailError } from './send-errors';

installFastDotStuffing();

export interface SmtpTransportOptions {
  /** `smtp://user:pass@host:587` or `smtps://…`; credentials percent-encoded; `?tls=` see readSmtpUrl. */
  smtpUrl: string;
  maxConnections?: number;
  /** Connect, greeting and idle-socket timeout. */
  timeoutsMs?: number;
  /** Signs every message (DKIM, relaxed/relaxed, rsa-sha256). */
  dkim?: { domainName: string; keySelector: string; privateKey: string };
}

/**
 * The headers DKIM signs: nodemailer's list (From, Subject, Message-ID, List-Id,
 * List-Unsubscribe, …) and the two more of ours, RFC 8058 asking for List-Unsubscribe-Post.
 */
const DKIM_SIGNED_HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:' +
  'Content-ID:Content-Description:In-Reply-To:References:List-Id:List-Help:List-Unsubscribe:List-Subscribe:' +
  'List-Post:List-Owner:List-Archive:List-Unsubscribe-Post:Auto-Submitted';

/** What the transport makes of SMTP_URL: the URL for nodemailer (our `tls` parameter removed) and its TLS policy. */
export interface SmtpUrlSettings {
  url: string;
  /** Send STARTTLS before anything else, and give up on a server that does not take it. */
  requireTLS: boolean;
}

/**
 * `smtps://` is TLS from the first byte. On `smtp://`, nodemailer upgrades with STARTTLS when the
 * server offers it, and otherwise carries on in clear text, credentials included: whoever sits on
 * the path can strip the offer (a downgrade) and read the password. So with credentials, STARTTLS is
 * required (`tls=required`, the default then); `tls=optional` accepts a connection that stays in
 * clear text, for a plain local relay, and is the default without credentials.
 */
export function readSmtpUrl(smtpUrl: string): SmtpUrlSettings {
  const url = new URL(smtpUrl);
  const tls = url.searchParams.get('tls');
  if (tls !== null && tls !== 'required' && tls !== 'optional') throw new Error('SMTP_URL: tls= must be required or optional');
  // nodemailer would take `tls=` for its own TLS options object.
  if (tls !== null) url.searchParams.delete('tls');
  const credentials = url.username !== '' || url.password !== '';
  return { url: url.toString(), requireTLS: url.protocol === 'smtp:' && (tls === 'required' || (tls === null && credentials)) };
}

/**
 * A pooled transport: servers commonly delay their greeting (smtp-server waits 100 ms to catch
 * clients that talk too early), so reusing open connections is what keeps throughput up. It is
 * nodemailer's SMTP pool without its Mail layer (see poolMessage): messages come composed.
 */
export function createSmtpTransport(options: SmtpTransportOptions): MailTransport {
  const timeout = options.timeoutsMs ?? 30_000;
  const { url, requireTLS } = readSmtpUrl(options.smtpUrl);
  const pool = new SMTPPool({
    url,
    requireTLS,
    maxConnections: options.maxConnections ?? 5,
    // Keep pooled connections for good: each new one costs the server's greeting delay.
    maxMessages: Infinity,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
  const dkim = options.dkim ? new DKIM({ ...options.dkim, headerFieldNames: DKIM_SIGNED_HEADERS }) : null;

  async function sendComposed({ envelope, raw }: MimeMessage, messageId: string): Promise<SendResult> {
    try {
      const info = await new Promise<{ response?: unknown }>((resolve, reject) => {
        pool.send(poolMessage(envelope, raw, messageId, dkim), (error, sent) => (error ? reject(error) : resolve(sent ?? {})));
      });
      return { response: String(info.response ?? '') };
    } catch (error) {
      throw toMailError(error);
    }
  }

  return {
    kind: 'smtp',
    send: (mail: OutgoingMail) => composeAndSend(mail, sendComposed),
    sendComposed,
    async verify(): Promise<void> {
      try {
        await pool.verify();
      } catch (error) {
        throw toMailError(error);
      }
    },
    async close(): Promise<void> {
      pool.close();
    },
  };
}

/**
 * A composed message as nodemailer's pool takes one from its Mail layer: what it reads of it is
 * the envelope, the Message-ID and a stream of the bytes (signed when DKIM is set, as the Mail
 * layer's DKIM step would). The Mail layer (sendMail) would wrap the raw bytes in a MIME node and
 * run them through a stream pipeline and newline transforms they do not need (composeMessage writes
 * CRLF lines, ending in one), and cost the client markedly more CPU a message that way than this
 * way, composing included (measured: see commit 8804427).
 */
function poolMessage(envelope: { from: string; to: string[] }, raw: Buffer, messageId: string, dkim: DKIM | null): Parameters<SMTPPool['send']>[0] {
  const message = {
    getEnvelope: () => ({ from: envelope.from, to: [...envelope.to] }),
    messageId: () => messageId,
    getHeader: (name: string) => (name.toLowerCase() === 'message-id' ? messageId : undefined),
    createReadStream: (): Readable => (dkim ? dkim.sign(raw) : Readable.from([raw], { objectMode: false })),
  };
  return { data: {}, message } as unknown as Parameters<SMTPPool['send']>[0];
}
