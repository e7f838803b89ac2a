import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { pause } from './wait';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  messageId: string;
  html: string;
  text: string;
  parsed: ParsedMail;
  /** The message as it arrived (for signature checks). */
  raw: Buffer;
  receivedAt: number;
}

/** What the server answers for a message: accept it, or an SMTP error code and text. */
export type Verdict = 'accept' | { code: number; message: string };

export interface TestSmtpServer {
  url: string;
  port: number;
  received: ReceivedMail[];
  /** Decides each message's fate (default: accept all). */
  setVerdict(decide: (mail: { to: string[]; attempt: number; messageId: string }) => Verdict): void;
  /** Decides each recipient at RCPT TO (default: accept all); a refused one gets the code and text. */
  setRecipientVerdict(decide: (address: string) => Verdict): void;
  /** Every RCPT TO the server was given, in order. */
  recipients: string[];
  /** Resolves once `count` messages were accepted (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export interface SmtpServerOptions {
  /** Waits this long before answering each message, like a busy server. */
  acceptDelayMs?: number;
}

/** A real SMTP server on loopback that keeps what it accepts, parsed. */
export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const attempts = new Map<string, number>();
  let decide: (mail: { to: string[]; attempt: number; messageId: string }) => Verdict = () => 'accept';
  let decideRecipient: (address: string) => Verdict = () => 'accept';
  const recipients: string[] = [];
  const waiters: Array<() => void> = [];

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      recipients.push(address.address);
      const verdict = decideRecipient(address.address);
      if (verdict === 'accept') return callback();
      return callback(Object.assign(new Error(verdict.message), { responseCode: verdict.code }));
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        const raw = Buffer.concat(chunks);
        if (options.acceptDelayMs) await pause(options.acceptDelayMs);
        const parsed = await simpleParser(raw);
        const to = session.envelope.rcptTo.map((rcpt) => rcpt.address);
        const key = parsed.messageId ?? raw.toString('base64').slice(0, 32);
        const attempt = (attempts.get(key) ?? 0) + 1;
        attempts.set(key, attempt);
        const verdict = decide({ to, attempt, messageId: parsed.messageId ?? '' });
        if (verdict !== 'accept') {
          const error = Object.assign(new Error(verdict.message), { responseCode: verdict.code });
          return callback(error);
        }
        received.push({
          to,
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          subject: parsed.subject ?? '',
          messageId: parsed.messageId ?? '',
          html: typeof parsed.html === 'string' ? parsed.html : '',
          text: parsed.text ?? '',
          parsed,
          raw,
          receivedAt: Date.now(),
        });
        callback();
        for (const wake of waiters.splice(0)) wake();
      });
    },
  });
  // A client killed mid-session (SIGKILL, a cut relay) resets its connection: that is the client's fault, not the server's.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    received,
    recipients,
    setVerdict(next) {
      decide = next;
    },
    setRecipientVerdict(next) {
      decideRecipient = next;
    },
    async waitFor(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} e-mails, received ${received.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 200));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
