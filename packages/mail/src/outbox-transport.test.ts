import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMailTransport } from './create-transport';
import { outboxFileName } from './outbox-transport';
import type { OutgoingMail } from './outgoing-mail';
import { PermanentMailError, TransientMailError } from './send-errors';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'notify-outbox-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function mail(overrides: Partial<OutgoingMail> = {}): OutgoingMail {
  return {
    from: 'alerts@localhost',
    to: 'soc@acme.example',
    subject: '[Acme] 3 new open ports detected — ünïcödé',
    html: '<p>Three ports</p>',
    text: 'Three ports',
    messageId: '<3f2b8c1e-delivery@notify.local>',
    ...overrides,
  };
}

describe('outbox transport', () => {
  it('is chosen when there is no SMTP_URL, and writes a parseable .eml named after the Message-ID', async () => {
    const outbox = createMailTransport({ smtpUrl: '', outboxDir: join(dir, 'nested', 'outbox') });
    expect(outbox.kind).toBe('outbox');
    await outbox.verify();
    const sent = mail();
    const result = await outbox.send(sent);

    expect(result.response).toBe(`written to ${join(dir, 'nested', 'outbox', '3f2b8c1e-delivery@notify.local.eml')}`);
    const files = await readdir(join(dir, 'nested', 'outbox'));
    expect(files).toEqual(['3f2b8c1e-delivery@notify.local.eml']);
    const parsed = await simpleParser(await readFile(join(dir, 'nested', 'outbox', files[0] ?? '')));
    expect(parsed.messageId).toBe(sent.messageId);
    expect(parsed.subject).toBe(sent.subject);
    expect(parsed.from?.value[0]?.address).toBe('alerts@localhost');
    expect(parsed.html).toContain('<p>Three ports</p>');
    expect(parsed.text?.trim()).toBe('Three ports');
    await outbox.close();
  });

  it('sends ASCII HTML as 7bit with CRLF lines, and quoted-printable when a line is too long or a character is not ASCII', async () => {
    const outbox = createMailTransport({ outboxDir: dir });
    const read = async (html: string) => {
      await outbox.send(mail({ html }));
      const raw = (await readFile(join(dir, '3f2b8c1e-delivery@notify.local.eml'))).toString('latin1');
      const parsed = await simpleParser(raw);
      const htmlPart = raw.slice(raw.indexOf('Content-Type: text/html'));
      return { encoding: /Content-Transfer-Encoding: (\S+)/.exec(htmlPart)?.[1], html: parsed.html || '', crlfOnly: !/[^\r]\n/.test(htmlPart) };
    };

    // As the renderer writes it: every character beyond ASCII a numeric reference.
    const page = '<html><head><style>p{color:#333}</style></head>\n<body><p>acme.example &#183; port 3389 &#8212; &#128293;</p>\n<p>x</p></body></html>';
    const seven = await read(page);
    expect(seven.encoding).toBe('7bit');
    expect(seven.crlfOnly).toBe(true);
    expect(seven.html.replaceAll('\r\n', '\n')).toBe(page);

    const longLine = `<p>${'x'.repeat(1200)}</p>`;
    const long = await read(longLine);
    expect(long.encoding).toBe('quoted-printable');
    expect(long.html).toBe(longLine);

    const unicode = '<p>acme.example · port 3389 — “rdp” 🔥 ünïcödé</p>';
    const other = await read(unicode);
    expect(other.encoding).toBe('quoted-printable');
    expect(other.html).toBe(unicode);
    await outbox.close();
  });

  it('replaces the file when the same delivery is sent again, and leaves no temporary file', async () => {
    const outbox = createMailTransport({ outboxDir: dir });
    await outbox.send(mail({ text: 'first' }));
    await outbox.send(mail({ text: 'second' }));
    await outbox.send(mail({ messageId: '<other@notify.local>' }));
    expect((await readdir(dir)).sort()).toEqual(['3f2b8c1e-delivery@notify.local.eml', 'other@notify.local.eml']);
    const parsed = await simpleParser(await readFile(join(dir, '3f2b8c1e-delivery@notify.local.eml')));
    expect(parsed.text?.trim()).toBe('second');
  });

  it('rejects an invalid recipient permanently and writes nothing', async () => {
    const outbox = createMailTransport({ outboxDir: dir });
    await expect(outbox.send(mail({ to: 'a@acme.example\nBcc: b@evil.example' }))).rejects.toBeInstanceOf(PermanentMailError);
    expect(await readdir(dir)).toEqual([]);
  });

  it('reports a folder it cannot write to as transient', async () => {
    const blocker = join(dir, 'a-file');
    await writeFile(blocker, 'not a folder');
    const outbox = createMailTransport({ outboxDir: join(blocker, 'outbox') });
    await expect(outbox.send(mail())).rejects.toBeInstanceOf(TransientMailError);
    await expect(outbox.verify()).rejects.toBeInstanceOf(TransientMailError);
  });

  it('keeps file names inside the folder whatever the Message-ID holds', () => {
    expect(outboxFileName('<../../etc/passwd@x>')).toBe('__.._etc_passwd@x.eml');
    expect(outboxFileName('<a/b\\c@host>')).toBe('a_b_c@host.eml');
  });
});
