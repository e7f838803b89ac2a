import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import type { ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SmtpSink {
  /** With the credentials; `?tls=optional` on a sink without STARTTLS (a plain local relay). */
  url: string;
  port: number;
  /** Every AUTH the server received: who, and whether the connection was encrypted by then. */
  logins: Array<{ user: string; secure: boolean }>;
  /** Parsed messages, in the order the server accepted them. */
  messages: ParsedMail[];
  /** Envelope recipients of each accepted message. */
  recipients: string[][];
  connections: number;
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  /** Answer RCPT TO with this code (4xx or 5xx) instead of accepting. */
  rejectRecipientWith?: number;
  /** Answer the end of DATA with this code instead of accepting. */
  rejectDataWith?: number;
  /** Offer STARTTLS, with smtp-server's own self-signed certificate (the URL then skips its verification). */
  starttls?: boolean;
  /** Take mail without AUTH too (a relay that trusts its network). */
  authOptional?: boolean;
}

function smtpError(code: number): Error & { responseCode: number } {
  return Object.assign(new Error(code < 500 ? 'Try again later' : 'Mailbox unavailable'), { responseCode: code });
}

/** A real SMTP server (the npm smtp-server) on a free local port, with user `user` / password `secret`. */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const sink = { messages: [] as ParsedMail[], recipients: [] as string[][], logins: [] as SmtpSink['logins'], connections: 0 };
  const server = new SMTPServer({
    disabledCommands: options.starttls ? [] : ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: options.authOptional ?? false,
    logger: false,
    onConnect(_session, callback) {
      sink.connections += 1;
      callback();
    },
    onAuth(auth, session, callback) {
      sink.logins.push({ user: auth.username ?? '', secure: session.secure });
      if (auth.username === 'user' && auth.password === 'secret') callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Invalid credentials'), { responseCode: 535 }));
    },
    onRcptTo(_address, _session, callback) {
      callback(options.rejectRecipientWith ? smtpError(options.rejectRecipientWith) : undefined);
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          if (options.rejectDataWith) return callback(smtpError(options.rejectDataWith));
          sink.messages.push(mail);
          sink.recipients.push(session.envelope.rcptTo.map((rcpt) => rcpt.address));
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return Object.assign(sink, {
    port,
    url: `smtp://user:secret@127.0.0.1:${port}${options.starttls ? '?tls.rejectUnauthorized=false' : '?tls=optional'}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
