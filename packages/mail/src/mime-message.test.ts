import fc from 'fast-check';
import { simpleParser } from 'mailparser';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';
import { describe, expect, it } from 'vitest';
import { composeMessage, quotedPrintable } from './mime-message';
import type { OutgoingMail } from './outgoing-mail';
import { PermanentMailError } from './send-errors';

function mail(overrides: Partial<OutgoingMail> = {}): OutgoingMail {
  return {
    from: 'Security Alerts <alerts@notify.example>',
    to: 'soc@acme.example',
    subject: '[Acme] 1 new open port detected: Port 3389 open',
    html: '<html><body>\n<p>Port <b>3389</b> open</p>\n</body></html>',
    text: 'Port 3389 open\nhttps://platform.example/findings/1',
    messageId: '<3f2b8c1e-delivery@notify.local>',
    list: { id: 'rule-7.acme.notify.example', name: 'Critical “ports” rule', unsubscribeUrl: 'https://notify.example/unsubscribe/abc?x=1' },
    ...overrides,
  };
}

function wire(raw: Buffer) {
  const text = raw.toString('latin1');
  const [head = '', ...rest] = text.split('\r\n\r\n');
  return { text, head, body: rest.join('\r\n\r\n') };
}

/** The header block's fields, unfolded. */
function headerFields(head: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    fields.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 2));
  }
  return fields;
}

describe('composeMessage', () => {
  it('writes an ASCII message with CRLF lines of 998 at most that a mail reader parses back to the same mail', async () => {
    const sent = mail({
      from: 'Sécurité Acme <alerts@notify.example>',
      subject: `[Acmé] Daily digest: 42 events — New open port detected ${'ü'.repeat(60)} 🔥`,
      text: `Dépôt “exposed” 🔥\n${'x'.repeat(1500)}\nend  \nlast`,
    });
    const { raw, envelope } = composeMessage(sent, new Date('2026-11-25T20:20:24Z'));
    expect(envelope).toEqual({ from: 'alerts@notify.example', to: ['soc@acme.example'] });
    const { text, head } = wire(raw);
    expect([...raw].every((byte) => byte < 0x80)).toBe(true);
    expect(/[^\r]\n|\r[^\n]/.test(text)).toBe(false);
    expect(Math.max(...text.split('\r\n').map((line) => line.length))).toBeLessThanOrEqual(998);
    expect(Math.max(...head.split('\r\n').map((line) => line.length))).toBeLessThanOrEqual(78);

    const parsed = await simpleParser(raw);
    expect(parsed.subject).toBe(sent.subject);
    expect(parsed.from?.value).toEqual([{ address: 'alerts@notify.example', name: 'Sécurité Acme' }]);
    expect(parsed.messageId).toBe(sent.messageId);
    expect(parsed.date?.toISOString()).toBe('2026-11-25T20:20:24.000Z');
    expect(parsed.text).toBe(sent.text);
    expect(parsed.html).toBe(sent.html);
    const fields = headerFields(head);
    expect(fields.get('date')).toBe('Wed, 25 Nov 2026 20:20:24 +0000');
    expect(fields.get('auto-submitted')).toBe('auto-generated');
    expect(fields.get('list-id')).toBe('"Critical ports rule" <rule-7.acme.notify.example>');
    expect(fields.get('list-unsubscribe')).toBe('<https://notify.example/unsubscribe/abc?x=1>');
    expect(fields.get('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    expect(fields.get('mime-version')).toBe('1.0');
  });

  it('sends ASCII parts of short lines as 7bit, and the others quoted-printable', () => {
    const encodings = (overrides: Partial<OutgoingMail>) =>
      [...wire(composeMessage(mail(overrides)).raw).body.matchAll(/Content-Type: (text\/\w+); charset=utf-8\r\nContent-Transfer-Encoding: (\S+)/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(encodings({})).toEqual(['text/plain 7bit', 'text/html 7bit']);
    expect(encodings({ text: 'naïve', html: `<p>${'x'.repeat(999)}</p>` })).toEqual(['text/plain quoted-printable', 'text/html quoted-printable']);
    expect(encodings({ text: 'carriage\rreturn', html: '<p>\0</p>' })).toEqual(['text/plain quoted-printable', 'text/html quoted-printable']);
  });

  it('keeps a part that looks like a boundary inside its part', async () => {
    const text = '--=_notify_\n--=_notify_00000000-0000-0000-0000-000000000000--\nstill text';
    const parsed = await simpleParser(composeMessage(mail({ text })).raw);
    expect(parsed.text).toBe(text);
    expect(parsed.html).toContain('<b>3389</b>');
  });

  it('quotes a sender name with specials, takes a bare address and a host without a dot (MAIL_FROM defaults to alerts@localhost)', async () => {
    const named = await simpleParser(composeMessage(mail({ from: '"Acme, Inc. (SOC)" <soc-alerts@notify.example>' })).raw);
    expect(named.from?.value).toEqual([{ address: 'soc-alerts@notify.example', name: 'Acme, Inc. (SOC)' }]);
    const bare = composeMessage(mail({ from: 'alerts@localhost', list: undefined }));
    expect(headerFields(wire(bare.raw).head).get('from')).toBe('alerts@localhost');
    expect(bare.envelope.from).toBe('alerts@localhost');
    expect(headerFields(wire(bare.raw).head).has('list-id')).toBe(false);
  });

  it.each([
    ['two addresses', 'a@notify.example; b@notify.example'],
    ['a group', 'Team: a@notify.example;'],
    ['no address', 'Security Alerts'],
    ['a quoted local part', '"a b"@notify.example'],
  ])('refuses %s as sender, permanently', (_case, from) => {
    expect(() => composeMessage(mail({ from }))).toThrow(PermanentMailError);
  });

  it('checks the mail first: a recipient with a header in it never reaches the message', () => {
    expect(() => composeMessage(mail({ to: 'soc@acme.example\r\nBcc: x@evil.example' }))).toThrow(PermanentMailError);
    expect(() => composeMessage(mail({ list: { id: 'rule.acme.example', name: 'r', unsubscribeUrl: `https://x.example/${'a'.repeat(980)}` } }))).toThrow(PermanentMailError);
  });
});

describe('composeMessage line breaks', () => {
  // Bodies and names of the characters that could break a line: bare CRs and LFs, both orders,
  // dots and long runs (a 7bit part's 998 limit), beyond ASCII and controls (quoted-printable).
  const piece = fc.constantFrom('\r', '\n', '\r\n', '\n\r', '.', 'a', ' ', 'é', '\x00', '\x0b', 'x'.repeat(500), '<p>', '=');
  const body = fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join(''));

  it('writes CRLF lines only, whatever the bodies and names hold (its bytes are marked so for the DATA stream)', () => {
    fc.assert(
      fc.property(body, body, body, (html, text, name) => {
        const raw = composeMessage(mail({ html, text, list: { id: 'r.acme.example', name, unsubscribeUrl: 'https://n.example/u/1' } })).raw.toString('latin1');
        expect(raw.replaceAll('\r\n', '')).not.toMatch(/[\r\n]/);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('quotedPrintable', () => {
  const nodemailers = (body: string) => qpWrap(qpEncode(Buffer.from(body.replace(/\r\n|\r|\n/g, '\r\n'), 'utf8')), 76);
  // Lines around the lengths where wrap changes its mind (74, 75, 76, 77), of the characters that
  // change what it does: "=", spaces and tabs (at a line's end), dots and commas (soft breaks),
  // beyond ASCII of two to four bytes, control characters, a lone surrogate.
  const character = fc.constantFrom('a', 'b', ' ', '\t', '=', '.', ',', '·', 'é', '😀', '-', 'Z', '\x01', '\x7f', '\ud83d', '•');
  const line = fc.oneof(
    fc.array(character, { maxLength: 12 }).map((chars) => chars.join('')),
    fc.tuple(fc.integer({ min: 60, max: 160 }), fc.array(character, { maxLength: 4 })).map(([n, tail]) => 'x'.repeat(n) + tail.join('')),
    fc.tuple(fc.integer({ min: 0, max: 80 }), character).map(([n, c]) => `${'word '.repeat(n).slice(0, n)}${c}`),
  );
  const ending = fc.constantFrom('\n', '\r\n', '\r');

  it("writes the bytes nodemailer's encode and wrap make of the whole body", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(line, ending), { maxLength: 30 }), fc.option(line), (lines, last) => {
        const body = lines.map(([text, end]) => text + end).join('') + (last ?? '');
        expect(quotedPrintable(body)).toBe(nodemailers(body));
      }),
      { numRuns: 3000 },
    );
  });

  it('writes short ASCII lines as they are and encodes the others', () => {
    const body = `Acme · Daily digest\nPort 3389 open\n${'x'.repeat(80)}\nsize=3\n\n`;
    expect(quotedPrintable(body)).toBe(`Acme =C2=B7 Daily digest\r\nPort 3389 open\r\n${'x'.repeat(75)}=\r\n${'x'.repeat(5)}\r\nsize=3D3\r\n\r\n`);
  });
});
