import { SCOPES } from '@notify/core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MailRenderer } from './mail-content';
import { sevenBitBody } from './mime-message';
import { asciiHtml, createMailRenderer, escapeHtmlAscii } from './renderer';
import { scopeLabel } from './scope-labels';
import { DIGEST_MJML, INSTANT_MJML } from './templates/mjml-templates';
import { TEXT_TEMPLATE } from './templates/text-template';
import { hrefs, makeContent, makeEvent, visibleText } from './testing/fixtures';
import { MAX_ASSET_ROWS, MAX_LISTED_EVENTS } from './view-model';

let renderer: MailRenderer;
beforeAll(async () => {
  renderer = await createMailRenderer();
});

function order(haystack: string, needles: string[]): number[] {
  return needles.map((needle) => {
    const index = haystack.indexOf(needle);
    expect(index, `${needle} is missing`).toBeGreaterThanOrEqual(0);
    return index;
  });
}

function ascending(values: number[]): boolean {
  return values.every((value, i) => i === 0 || value > (values[i - 1] ?? -1));
}

describe('createMailRenderer', () => {
  it('never writes a value unescaped: no triple mustache or `&` tag in any template', () => {
    for (const template of [INSTANT_MJML, DIGEST_MJML, TEXT_TEMPLATE]) {
      expect(template).not.toMatch(/\{\{\{|\{\{\s*&/);
    }
  });

  it('keeps every line of a large digest short enough for the HTML to go as 7bit', () => {
    const events = Array.from({ length: MAX_LISTED_EVENTS }, (_, i) =>
      makeEvent({ asset: `host${i}.example.com`, tags: ['prod', 'web'], data: { port: 3000 + i, service: 'rdp', banner: `banner ${i}`, region: 'eu-west-1' } }),
    );
    const { html } = renderer.render(makeContent({ kind: 'digest', frequency: 'daily', events }));
    const longest = Math.max(...html.split('\r\n').map((line) => line.length));
    expect(longest).toBeLessThanOrEqual(998);
    expect(sevenBitBody(html)).toBe(html);
  });

  it('keeps a digest of 60 events on 60 assets under the 102 KB past which Gmail cuts the HTML off, unsubscribe link and all', () => {
    const events = Array.from({ length: 60 }, (_, i) =>
      makeEvent({ asset: `host${i}.example.com`, title: `Event ${i}`, data: { port: 3000 + i, service: 'rdp', banner: `banner ${i}` } }),
    );
    const { html } = renderer.render(makeContent({ kind: 'digest', frequency: 'daily', events, unsubscribeUrl: 'https://notify.example.com/u/token' }));
    // A section for each asset, as MJML wraps one, put it well past the limit, indentation trimmed or not.
    expect(html.length).toBeLessThan(102 * 1024);
    // No line starts or ends with MJML's indentation.
    expect(html).not.toMatch(/[ \t]\r\n|\r\n[ \t]/);
    const seen = visibleText(html);
    for (const i of [0, 29, 59]) expect(seen).toContain(`host${i}.example.com`);
    expect(seen).toContain('Event 59');
    expect(seen).toContain('Unsubscribe from this rule');
  });

  it('refuses a template whose spaces at a line break are its text, and trims them elsewhere', () => {
    expect(asciiHtml('<p>\n    a\n  <b>b</b>  \n</p>')).toBe('<p>\r\na\r\n<b>b</b>\r\n</p>');
    expect(asciiHtml('<div style="white-space:pre-line">\n  a</div>')).toBe('<div style="white-space:pre-line">\r\na</div>');
    for (const kept of ['<pre>\n  a</pre>', '<textarea>\n a</textarea>', '<div style="white-space:pre">x</div>', '<div style="white-space: pre-wrap;">x</div>']) {
      expect(() => asciiHtml(kept), kept).toThrow(/keeps its spaces/);
    }
  });

  it('writes ASCII HTML whatever the values hold: each other character as a numeric reference a reader sees as itself', () => {
    const content = makeContent({
      kind: 'digest', frequency: 'daily', organizationName: 'Société Générale 😀', ruleName: 'Ports « exposés »',
      events: [makeEvent({ title: 'Ünïcode – title 𝔘', summary: 'naïve café', asset: 'xn--caf-dma.example', tags: ['prod·eu'] })],
    });
    for (const kind of ['digest', 'instant'] as const) {
      const { html } = renderer.render({ ...content, kind, frequency: kind === 'digest' ? 'daily' : 'instant' });
      expect(Buffer.byteLength(html, 'utf8')).toBe(html.length); // ASCII only
      const seen = visibleText(html);
      for (const text of ['Société Générale 😀', 'Ports « exposés »', 'Ünïcode – title 𝔘', 'naïve café', 'prod·eu', 'Société Générale 😀 · ']) expect(seen).toContain(text);
      // CRLF lines, as a 7bit part carries them: the message takes the HTML as it is.
      expect(sevenBitBody(html)).toBe(html);
    }
  });

  it('escapes as mustache does, and writes characters beyond ASCII (astral ones whole) as numeric references', () => {
    expect(escapeHtmlAscii(`<a href="x">&'\`=/</a>`)).toBe('&lt;a href&#x3D;&quot;x&quot;&gt;&amp;&#39;&#x60;&#x3D;&#x2F;&lt;&#x2F;a&gt;');
    expect(escapeHtmlAscii('é – 😀 \ud83d')).toBe('&#233; &#8211; &#128512; &#55357;');
    expect(escapeHtmlAscii(42)).toBe('42');
  });

  it('writes every line break of a value as CRLF, which a reader sees as the same break', () => {
    expect(escapeHtmlAscii('a\nb\r\nc\rd')).toBe('a\r\nb\r\nc\r\nd');
    const { html } = renderer.render(makeContent({ events: [makeEvent({ summary: 'line one\nline two\r\nline three\rline four' })] }));
    expect(sevenBitBody(html)).toBe(html);
    expect(visibleText(html)).toContain('line one line two line three line four');
  });

  it('groups by asset, then severity from critical to info, newest first, with counts', () => {
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 10, minute));
    const events = [
      makeEvent({ asset: 'a.example.com', severity: 'low', title: 'A-low', occurredAt: at(1) }),
      makeEvent({ asset: 'b.example.com', severity: 'critical', title: 'B-critical', occurredAt: at(2) }),
      makeEvent({ asset: 'a.example.com', severity: 'high', title: 'A-high-old', occurredAt: at(3) }),
      makeEvent({ asset: 'a.example.com', severity: 'high', title: 'A-high-new', occurredAt: at(9) }),
      makeEvent({ asset: 'a.example.com', severity: null, title: 'A-unrated', occurredAt: at(5) }),
      makeEvent({ asset: 'b.example.com', severity: 'info', title: 'B-info', occurredAt: at(6) }),
      makeEvent({ asset: 'a.example.com', severity: 'medium', title: 'A-medium', occurredAt: at(7) }),
    ];
    const mail = renderer.render(makeContent({ kind: 'digest', frequency: 'daily', events }));
    const html = visibleText(mail.html);

    // b.example.com holds the only critical event, so it comes first.
    expect(ascending(order(html, ['b.example.com (subdomain) · 2 events', 'B-critical', 'B-info', 'a.example.com (subdomain) · 5 events']))).toBe(true);
    expect(ascending(order(html, ['High · 2', 'A-high-new', 'A-high-old', 'Medium · 1', 'A-medium', 'Low · 1', 'A-low', 'No severity · 1', 'A-unrated']))).toBe(true);
    expect(html).toContain('matched 7 events on 2 assets');
    for (const badge of ['1 Critical', '2 High', '1 Medium', '1 Low', '1 Info', '1 No severity']) expect(html).toContain(badge);
    expect(html).toMatch(/Events per asset b\.example\.com 2 a\.example\.com 5/);

    const text = mail.text;
    expect(ascending(order(text, ['== b.example.com (subdomain) | 2 events ==', '-- Critical | 1 --', '* B-critical', '-- Info | 1 --', '== a.example.com (subdomain) | 5 events ==', '-- High | 2 --', '* A-high-new', '* A-high-old', '-- No severity | 1 --', '* A-unrated']))).toBe(true);
    // The template's own text is ASCII: with ASCII values, the part goes 7bit as it is.
    expect(sevenBitBody(text)).not.toBeNull();
    expect(text).toContain('Rule "Exposed ports" matched 7 events on 2 assets.');
  });

  it('links an event only when its url is http or https', () => {
    const events = [
      makeEvent({ title: 'Secure link', url: 'https://app.example.com/findings/1?tab=a&x=1' }),
      makeEvent({ title: 'Plain link', url: 'http://app.example.com/findings/2' }),
      makeEvent({ title: 'Script link', url: 'javascript:alert(1)' }),
      makeEvent({ title: 'Data link', url: 'data:text/html,<script>alert(1)</script>' }),
      makeEvent({ title: 'Relative link', url: '/findings/3' }),
      makeEvent({ title: 'Spaced script', url: ' JavaScript:alert(1)' }),
      makeEvent({ title: 'No link', url: null }),
    ];
    const mail = renderer.render(makeContent({ events }));
    expect(hrefs(mail.html).sort()).toEqual(['http://app.example.com/findings/2', 'https://app.example.com/findings/1?tab=a&x=1']);
    expect(mail.html.toLowerCase()).not.toContain('javascript:');
    expect(mail.html).not.toContain('data:text/html');
    expect(mail.text).toContain('https://app.example.com/findings/1?tab=a&x=1');
    expect(mail.text.toLowerCase()).not.toContain('javascript:');
  });

  it('puts the same events, dates and data in the plain-text part', () => {
    const events = [
      makeEvent({ title: 'Port 3389 open', summary: 'RDP exposed\nto the internet', tags: ['production', 'eu'], data: { port: 3389, banner: { product: 'xrdp' } } }),
      makeEvent({ title: 'Port 22 open', asset: 'ssh.example.com', severity: 'medium', occurredAt: new Date('2026-07-01T08:00:00Z') }),
    ];
    const mail = renderer.render(makeContent({ events }));
    for (const part of [mail.text, visibleText(mail.html)]) {
      expect(part).toContain('Port 3389 open');
      expect(part).toContain('Port 22 open');
      expect(part).toContain('20 Nov 2026, 11:15 CET');
      expect(part).toContain('1 Jul 2026, 10:00 CEST');
      expect(part).toContain('production, eu');
      expect(part).toContain('{"product":"xrdp"}');
      expect(part).toContain('RDP exposed');
    }
    expect(mail.text).toContain('  RDP exposed\n  to the internet');
    expect(mail.text).toContain('  port: 3389');
    expect(mail.text).not.toMatch(/<[a-z]/i);
  });

  it('shows the digest period in the organization time zone and falls back to UTC for a bad zone', () => {
    const period = { start: new Date('2026-11-19T23:00:00Z'), end: new Date('2026-11-20T23:00:00Z') };
    const paris = renderer.render(makeContent({ kind: 'digest', frequency: 'daily', period }));
    expect(paris.text).toContain('Period: 20 Nov 2026, 00:00 CET to 21 Nov 2026, 00:00 CET');
    const bad = renderer.render(makeContent({ kind: 'digest', frequency: 'daily', period, timeZone: 'Mars/Olympus' }));
    expect(bad.text).toContain('Period: 19 Nov 2026, 23:00 UTC to 20 Nov 2026, 23:00 UTC');
  });

  it(`lists at most ${MAX_LISTED_EVENTS} events with "and N more", while the counts cover all`, () => {
    const events = Array.from({ length: MAX_LISTED_EVENTS + 42 }, (_, i) =>
      makeEvent({ title: `Finding ${i}`, asset: `host-${i % 3}.example.com`, severity: i < 5 ? 'critical' : 'low' }),
    );
    const mail = renderer.render(makeContent({ kind: 'digest', frequency: 'weekly', events }));
    const html = visibleText(mail.html);
    expect(mail.subject).toBe(`[Acme] Weekly digest: ${MAX_LISTED_EVENTS + 42} events — New open port detected`);
    expect(html).toContain(`matched ${MAX_LISTED_EVENTS + 42} events on 3 assets`);
    expect(html).toContain('5 Critical');
    expect(html).toContain(`${MAX_LISTED_EVENTS + 37} Low`);
    expect(html).toContain('… and 42 more events not listed here');
    expect(mail.text).toContain('… and 42 more events not listed here');
    expect(mail.text.match(/^\* Finding/gm)).toHaveLength(MAX_LISTED_EVENTS);
    // The most severe are the ones kept.
    for (let i = 0; i < 5; i += 1) expect(mail.text).toContain(`* Finding ${i}\n`);
  });

  it('renders every one of the 21 scopes with its label, as an alert and as a digest', () => {
    for (const scope of SCOPES) {
      for (const kind of ['instant', 'digest'] as const) {
        const mail = renderer.render(makeContent({ scope, kind, frequency: kind === 'digest' ? 'hourly' : 'instant', events: [makeEvent({ scope }), makeEvent({ scope })] }));
        expect(visibleText(mail.html)).toContain(scopeLabel(scope));
        expect(mail.text).toContain(scopeLabel(scope));
        if (kind === 'digest') expect(mail.subject).toContain(scopeLabel(scope));
      }
    }
  });

  it(`caps the digest's per-asset table at ${MAX_ASSET_ROWS} rows`, () => {
    const events = Array.from({ length: MAX_ASSET_ROWS + 5 }, (_, i) => makeEvent({ asset: `host-${String(i).padStart(2, '0')}.example.com` }));
    const mail = renderer.render(makeContent({ kind: 'digest', frequency: 'daily', events }));
    expect(mail.text).toContain('… and 5 more assets');
    expect(visibleText(mail.html)).toContain('… and 5 more assets');
    expect(mail.text).toContain(`matched ${MAX_ASSET_ROWS + 5} events on ${MAX_ASSET_ROWS + 5} assets`);
  });

  it('renders an empty digest without failing', () => {
    const mail = renderer.render(makeContent({ kind: 'digest', frequency: 'monthly', events: [] }));
    expect(mail.subject).toBe('[Acme] Monthly digest: 0 events — New open port detected');
    expect(mail.text).toContain('matched 0 events on 0 assets');
  });
  it('renders an e-mail once for many recipients, each one the same as rendered for them alone', () => {
    const events = [makeEvent({ title: 'Ports & <services>' }), makeEvent({ asset: 'db.example.com', severity: 'critical' })];
    const recipients = [
      { name: 'Zoë <b>O\'Brien</b> & co', unsubscribeUrl: 'https://notify.example.com/unsubscribe/a?x=1&y=2' },
      { name: 'Ann', unsubscribeUrl: 'https://notify.example.com/unsubscribe/b' },
      { name: null, unsubscribeUrl: 'https://notify.example.com/unsubscribe/c' },
      { name: '  \u0001 ', unsubscribeUrl: '' },
      { name: 'Bob' },
      {},
    ];
    for (const kind of ['digest', 'instant'] as const) {
      const content = makeContent({ kind, frequency: kind === 'digest' ? 'daily' : 'instant', events, repeats: 2 });
      const shared = renderer.renderShared(content);
      for (const recipient of [...recipients, ...recipients]) {
        const alone = renderer.render({ ...content, recipient: { email: 'm@example.com', name: recipient.name }, unsubscribeUrl: recipient.unsubscribeUrl });
        const mail = shared.for(recipient);
        expect(mail).toEqual(alone);
        expect(mail.html + mail.text).not.toContain('\u0001');
      }
    }
  });
});
