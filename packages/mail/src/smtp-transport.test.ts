import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMailTransport } from './create-transport';
import type { MailTransport, OutgoingMail } from './outgoing-mail';
import { PermanentMailError, TransientMailError } from './send-errors';
import { startSmtpServer, type SmtpServerOptions, type TestSmtpServer } from './testing/smtp-server';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real SMTP server that asks for AUTH as `user` / `secret` (unless `authOptional`). */
async function sink(options: Omit<SmtpServerOptions, 'auth'> = {}): Promise<TestSmtpServer> {
  const started = await startSmtpServer({ auth: { user: 'user', password: 'secret' }, ...options });
  cleanups.push(started.close);
  return started;
}

const refuse = (code: number) => () => ({ code, message: code < 500 ? 'Try again later' : 'Mailbox unavailable' });

function transport(smtpUrl: string, extra: { maxConnections?: number; timeoutsMs?: number } = {}): MailTransport {
  const created = createMailTransport({ smtpUrl, outboxDir: '/nonexistent-outbox', timeoutsMs: 5_000, ...extra });
  cleanups.push(() => created.close());
  return created;
}

function mail(overrides: Partial<OutgoingMail> = {}): OutgoingMail {
  return {
    from: 'Notify <alerts@notify.example>',
    to: 'soc@acme.example',
    subject: '[Acme] 1 new open port detected: Port 3389 open',
    html: '<p>Port <b>3389</b> open</p>',
    text: 'Port 3389 open',
    messageId: `<${crypto.randomUUID()}@notify.local>`,
    ...overrides,
  };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('smtp transport', () => {
  it('delivers subject, from, to, Message-ID, html and text through the pool', async () => {
    const server = await sink();
    const smtp = transport(server.url);
    expect(smtp.kind).toBe('smtp');
    await smtp.verify();
    const sent = mail({ subject: '[Acme] Daily digest: 42 events — New open port detected' });
    const result = await smtp.send(sent);

    expect(result.response).toMatch(/^250/);
    expect(server.received).toHaveLength(1);
    const received = server.received[0];
    expect(received?.subject).toBe(sent.subject);
    expect(received?.messageId).toBe(sent.messageId);
    expect(received?.parsed.from?.value).toEqual([{ address: 'alerts@notify.example', name: 'Notify' }]);
    const to = received?.parsed.to;
    expect(to && !Array.isArray(to) ? to.value.map((a) => a.address) : []).toEqual(['soc@acme.example']);
    expect(received?.to).toEqual(['soc@acme.example']);
    expect(received?.html).toContain('<b>3389</b>');
    expect(received?.text.trim()).toBe('Port 3389 open');
  });

  it('sends lines that start with a dot, and a line that is one, as they were written (dot-stuffed on the wire)', async () => {
    const server = await sink();
    const text = '.hidden\n.\n..two\nlast line\n.';
    const html = '<p>x</p>\n.<b>dot</b>\n.\n';
    await transport(server.url).send(mail({ text, html }));
    expect(server.received[0]?.text).toBe(text);
    expect(server.received[0]?.html).toBe(html);
  });

  it('reuses pooled connections instead of one per message', async () => {
    const server = await sink();
    const smtp = transport(server.url, { maxConnections: 2 });
    const sent = Array.from({ length: 12 }, (_, i) => mail({ to: `member${i}@acme.example` }));
    await Promise.all(sent.map((message) => smtp.send(message)));
    expect(server.received.map((m) => m.messageId).sort()).toEqual(sent.map((m) => m.messageId).sort());
    expect(server.connections).toBeLessThanOrEqual(2);
  });

  it('turns a 451 into a TransientMailError', async () => {
    const server = await sink();
    server.setRecipientVerdict(refuse(451));
    const error = await transport(server.url).send(mail()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientMailError);
    expect((error as Error).cause).toMatchObject({ responseCode: 451 });
  });

  it('turns a 550 into a PermanentMailError, at RCPT or after DATA', async () => {
    for (const refused of ['setRecipientVerdict', 'setVerdict'] as const) {
      const server = await sink();
      server[refused](refuse(550));
      const error = await transport(server.url).send(mail()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PermanentMailError);
      expect((error as Error).cause).toMatchObject({ responseCode: 550 });
      expect(server.received).toHaveLength(0);
    }
  });

  it('treats a refused connection as transient, for send and verify', async () => {
    const smtp = transport(`smtp://127.0.0.1:${await closedPort()}`);
    await expect(smtp.send(mail())).rejects.toBeInstanceOf(TransientMailError);
    await expect(smtp.verify()).rejects.toBeInstanceOf(TransientMailError);
  });

  it.each([
    ['a CR/LF header injection', 'soc@acme.example\r\nBcc: attacker@example.com'],
    ['a list of addresses', 'soc@acme.example, attacker@example.com'],
    ['a display name with angle brackets', 'SOC <soc@acme.example>'],
    ['no address at all', 'not-an-address'],
  ])('rejects %s as recipient, permanently and before connecting', async (_case, to) => {
    const server = await sink();
    const error = await transport(server.url).send(mail({ to })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentMailError);
    expect(server.connections).toBe(0);
  });

  it('rejects a malformed Message-ID permanently', async () => {
    const server = await sink();
    await expect(transport(server.url).send(mail({ messageId: 'no-brackets@x\r\nX: y' }))).rejects.toBeInstanceOf(PermanentMailError);
  });

  describe('TLS on smtp:// with credentials', () => {
    it('sends the credentials only after STARTTLS when the server offers it', async () => {
      const server = await sink({ starttls: true });
      await transport(server.url).send(mail());
      expect(server.logins).toEqual([{ user: 'user', secure: true }]);
      expect(server.received).toHaveLength(1);
    });

    it('refuses to send the credentials over a connection STARTTLS cannot encrypt (an offer stripped on the way)', async () => {
      const server = await sink();
      for (const url of [`smtp://user:secret@127.0.0.1:${server.port}`, `smtp://user:secret@127.0.0.1:${server.port}?tls=required`]) {
        const smtp = transport(url);
        await expect(smtp.verify()).rejects.toBeInstanceOf(TransientMailError);
        await expect(smtp.send(mail())).rejects.toBeInstanceOf(TransientMailError);
      }
      expect(server.logins).toEqual([]);
      expect(server.received).toHaveLength(0);
    });

    it('sends them in clear text to a relay the URL says is plain (tls=optional), and needs no TLS without credentials', async () => {
      const server = await sink({ authOptional: true });
      await transport(`smtp://user:secret@127.0.0.1:${server.port}?tls=optional`).send(mail());
      expect(server.logins).toEqual([{ user: 'user', secure: false }]);
      await transport(`smtp://127.0.0.1:${server.port}`).send(mail());
      expect(server.received).toHaveLength(2);
    });

    it('still upgrades with tls=optional when the server offers STARTTLS, and can be told to insist without credentials', async () => {
      const tlsServer = await sink({ starttls: true });
      await transport(`smtp://user:secret@127.0.0.1:${tlsServer.port}?tls=optional&tls.rejectUnauthorized=false`).send(mail());
      expect(tlsServer.logins).toEqual([{ user: 'user', secure: true }]);
      const plain = await sink({ authOptional: true });
      await expect(transport(`smtp://127.0.0.1:${plain.port}?tls=required`).send(mail())).rejects.toBeInstanceOf(TransientMailError);
      expect(plain.received).toHaveLength(0);
    });
  });
});
