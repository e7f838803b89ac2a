import { beforeAll, describe, expect, it } from 'vitest';
import type { MailContent, MailRenderer } from './mail-content';
import fc from 'fast-check';
import { createMailRenderer, escapeHtmlAscii } from './renderer';
import { hasControlCharacter } from '@notify/core';
import { hrefs, makeContent, makeEvent, visibleText } from './testing/fixtures';

let renderer: MailRenderer;
beforeAll(async () => {
  renderer = await createMailRenderer();
});

/** A payload per field, each able to open a tag or break out of an attribute if written raw. */
const payload = (field: string) => `"><img src=x onerror=alert('${field}')><script>alert('${field}')</script>`;

function hostileContent(kind: MailContent['kind'], wrap: (field: string) => string = payload): MailContent {
  return makeContent({
    kind,
    frequency: kind === 'digest' ? 'daily' : 'instant',
    organizationName: wrap('organization'),
    ruleName: wrap('rule'),
    recipient: { email: 'soc@acme.example', name: wrap('recipient') },
    events: [
      makeEvent({
        title: wrap('title'),
        summary: wrap('summary'),
        asset: wrap('asset'),
        assetType: wrap('assetType'),
        tags: [wrap('tag')],
        data: { [wrap('dataKey')]: wrap('dataValue'), nested: { html: wrap('nested') } },
        url: `https://example.com/${wrap('url')}`,
      }),
      makeEvent({ title: 'javascript link', url: 'javascript:alert(1)' }),
    ],
  });
}

const FIELDS = ['organization', 'rule', 'recipient', 'title', 'summary', 'asset', 'assetType', 'tag', 'dataKey', 'dataValue', 'nested'];

describe.each(['instant', 'digest'] as const)('escaping in the %s e-mail', (kind) => {
  it('writes every event field, name and data value as text, never as markup', () => {
    const { html } = renderer.render(hostileContent(kind));
    expect(html).not.toMatch(/<img|<script|onerror=/i);
    // Same shape with harmless values: every `<` and `"` in the output belongs to the template.
    const benign = renderer.render(hostileContent(kind, (field) => field)).html;
    const count = (value: string, char: string) => value.split(char).length - 1;
    expect(count(html, '<')).toBe(count(benign, '<'));
    expect(count(html, '"')).toBe(count(benign, '"'));
    const text = visibleText(html);
    for (const field of FIELDS) {
      // Present, and readable as the literal text the scanner sent.
      expect(text, field).toContain(`"><img src=x onerror=alert('${field}')>`);
    }
  });

  it('links only the http(s) url, percent-encoded inside the attribute', () => {
    const { html } = renderer.render(hostileContent(kind));
    const links = hrefs(html);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatch(/^https:\/\/example\.com\/%22%3E%3Cimg/);
    expect(html.toLowerCase()).not.toContain('javascript:');
  });

  it('keeps the subject a single line', () => {
    const content = hostileContent(kind);
    content.organizationName = 'Acme\r\nBcc: attacker@example.com\r\n';
    const first = content.events[0];
    if (first) first.title = 'x\r\nContent-Type: text/html\n\nboom';
    content.events = kind === 'instant' && first ? [first] : content.events;
    const { subject } = renderer.render(content);
    expect(hasControlCharacter(subject)).toBe(false);
    expect(subject.startsWith('[Acme Bcc: attacker@example.com]')).toBe(true);
  });

  it('keeps markup out of the plain-text part too, as literal text', () => {
    const { text } = renderer.render(hostileContent(kind));
    expect(text).toContain(payload('title'));
    expect(text).not.toContain('javascript:');
  });
});

describe('escapeHtmlAscii', () => {
  const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '/': '&#x2F;', '`': '&#x60;', '=': '&#x3D;', '\n': '\r\n' };
  /** Mustache's escapes, each line break a CRLF, each character beyond ASCII (a lone surrogate too) its reference: one character at a time. */
  const expected = (value: string) =>
    Array.from(value.replace(/\r\n?/g, '\n'), (c) => ESCAPES[c] ?? (c.charCodeAt(0) < 0x80 ? c : `&#${c.codePointAt(0)};`)).join('');
  const character = fc.oneof(fc.constantFrom('&', '<', '"', "'", '/', '`', '=', '\r', '\n', 'a', ' ', '.', '·', '—', '😀', '\ud83d', '\x01', '\x7f', '\x80', '\u00ff'), fc.string({ unit: 'binary', maxLength: 2 }));

  it('writes what each character escaped alone writes, with or without anything to escape', () => {
    fc.assert(
      fc.property(fc.array(character, { maxLength: 30 }), (characters) => {
        const value = characters.join('');
        expect(escapeHtmlAscii(value)).toBe(expected(value));
      }),
      { numRuns: 3000 },
    );
    expect(escapeHtmlAscii('h3.example.com')).toBe('h3.example.com');
    expect(escapeHtmlAscii(3389)).toBe('3389');
  });
});
