import type { AddressInfo } from 'node:net';
import { setTimeout as pause } from 'node:timers/promises';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** Envelope recipients. */
  to: string[];
  /** Envelope sender. */
  from: string;
  subject: string;
  messageId: string;
  html: string;
  text: string;
  parsed: ParsedMail;
  /** The message as it arrived, dot-stuffing undone (for signature checks). */
  raw: Buffer;
  receivedAt: number;
}

/** What the server answers for a message or a recipient: accept it, or an SMTP error code and text. */
export type Verdict = 'accept' | { code: number; message: string };

export interface SmtpServerOptions {
  /** Ask for AUTH as this user with this password (the URL carries them); without, mail is taken without AUTH. */
  auth?: { user: string; password: string };
  /** With `auth`, take mail without AUTH too (a relay that trusts its network); a login is still checked. */
  authOptional?: boolean;
  /** Offer STARTTLS, with smtp-server's own self-signed certificate (the URL then skips its verification). */
  starttls?: boolean;
  /** Waits this long before answering each message, like a busy server. */
  acceptDelayMs?: number;
}

export interface TestSmtpServer {
  /** With the credentials of `auth`; `?tls=optional` with them and no STARTTLS (a plain local relay). */
  url: string;
  port: number;
  /** The messages accepted, in order. */
  received: ReceivedMail[];
  /** Every RCPT TO the server was given, in order, refused ones too. */
  recipients: string[];
  /** Every AUTH the server was given: who, and whether the connection was encrypted by then. */
  logins: Array<{ user: string; secure: boolean }>;
  /** Connections opened so far. */
  readonly connections: number;
  /** Decides each message's fate (default: accept all); `attempt` counts tries of one Message-ID. */
  setVerdict(decide: (mail: { to: string[]; attempt: number; messageId: string }) => Verdict): void;
  /** Decides each recipient at RCPT TO (default: accept all); a refused one gets the code and text. */
  setRecipientVerdict(decide: (address: string) => Verdict): void;
  /** Resolves once `count` messages were accepted (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

function smtpError(verdict: Exclude<Verdict, 'accept'>): Error & { responseCode: number } {
  return Object.assign(new Error(verdict.message), { responseCode: verdict.code });
}

/** A real SMTP server (the npm smtp-server) on a free loopback port that keeps what it accepts, parsed. */
export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const recipients: string[] = [];
  const logins: TestSmtpServer['logins'] = [];
  const attempts = new Map<string, number>();
  const waiters: Array<() => void> = [];
  let connections = 0;
  let decide: (mail: { to: string[]; attempt: number; messageId: string }) => Verdict = () => 'accept';
  let decideRecipient: (address: string) => Verdict = () => 'accept';
  const { auth } = options;

  const server = new SMTPServer({
    disabledCommands: options.starttls ? [] : ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: auth ? (options.authOptional ?? false) : true,
    logger: false,
    onConnect(_session, callback) {
      connections += 1;
      callback();
    },
    onAuth(login, session, callback) {
      logins.push({ user: login.username ?? '', secure: session.secure });
      if (auth && login.username === auth.user && login.password === auth.password) callback(null, { user: login.username });
      else callback(Object.assign(new Error('Invalid credentials'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      recipients.push(address.address);
      const verdict = decideRecipient(address.address);
      callback(verdict === 'accept' ? undefined : smtpError(verdict));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        try {
          const raw = Buffer.concat(chunks);
          if (options.acceptDelayMs) await pause(options.acceptDelayMs);
          const parsed = await simpleParser(raw);
          const to = session.envelope.rcptTo.map((rcpt) => rcpt.address);
          const key = parsed.messageId ?? raw.toString('base64').slice(0, 32);
          const attempt = (attempts.get(key) ?? 0) + 1;
          attempts.set(key, attempt);
          const verdict = decide({ to, attempt, messageId: parsed.messageId ?? '' });
          if (verdict !== 'accept') return callback(smtpError(verdict));
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
        } catch (error) {
          callback(error as Error);
        }
      });
    },
  });
  // A client killed mid-session (SIGKILL, a cut relay) resets its connection: that is the client's fault, not the server's.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const credentials = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.password)}@` : '';
  const query = options.starttls ? '?tls.rejectUnauthorized=false' : auth ? '?tls=optional' : '';

  return {
    url: `smtp://${credentials}127.0.0.1:${port}${query}`,
    port,
    received,
    recipients,
    logins,
    get connections() {
      return connections;
    },
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
