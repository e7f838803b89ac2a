/**
 * E-mail safety through the whole pipeline and a real SMTP server: line breaks of every kind in
 * organization, rule and member names and in event fields cannot add a header or a recipient (the
 * received message is parsed); HTML, scripts, images and links in event text cannot add markup or
 * links to the HTML part (only an event's own http(s) URL becomes a link); and member addresses
 * that could carry a second recipient or a header are refused by the operator API with a 400.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '@notify/mail/testing';
import { makeEvent, startPipeline, type PipelineHarness } from '../support/pipeline';
import { waitUntilSettled } from '../support/wait';
import { expectApplicationError, paramsOf } from './abuse-support';

const COALESCE_MS = 500;

/** Ways to end a header line and start another, as a name or event text might carry them. */
const HEADER_ATTACKS = [
  '\r\nBcc: evil-crlf@attacker.example',
  '\rBcc: evil-cr@attacker.example',
  '\nBcc: evil-lf@attacker.example',
  '\u2028Bcc: evil-ls@attacker.example',
  '\u2029Bcc: evil-ps@attacker.example',
  '\u0085Bcc: evil-nel@attacker.example',
  '\r\n Bcc: evil-folded@attacker.example',
  '\r\n\r\n<h1 id="injected-body">injected body</h1>',
  '\r\nContent-Type: text/html\r\n\r\n<script id="injected-script">alert(1)</script>',
  ' =?UTF-8?Q?x=0D=0ABcc:_evil-encoded@attacker.example?=',
  '\r\nTo: evil-to@attacker.example\r\nX-Injected: yes',
];

/** Markup and links that event text might carry; none may become markup or a link. */
const HTML_ATTACKS = [
  '<script>alert("xss")</script>',
  '<img src="https://evil.example/pixel.png" onerror="alert(1)">',
  '<a href="https://evil.example/phish">click here</a>',
  '<a href="javascript:alert(1)">js</a>',
  '[markdown link](https://evil.example/markdown)',
  'javascript:alert(1)',
  '"><svg onload=alert(1)>',
  "'><iframe src=//evil.example/frame>",
  '<style>body{display:none}</style>',
  '{{title}} {{{link}}} <%= 7*7 %> ${7*7}',
  '&lt;script&gt;already escaped&lt;/script&gt;',
  '<!-- comment --><![CDATA[x]]>',
];

/** Tag names and link targets in an HTML part (attribute values entity-decoded). */
function markup(html: string): { tags: Set<string>; links: Set<string>; handlers: string[] } {
  const tags = new Set<string>();
  const links = new Set<string>();
  const handlers: string[] = [];
  for (const [, name, attributes] of html.matchAll(/<([a-zA-Z][a-zA-Z0-9:-]*)\b([^>]*)>/g)) {
    tags.add(name!.toLowerCase());
    for (const [, attribute, raw] of attributes!.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/g)) {
      const value = raw!.replace(/^["']|["']$/g, '')
        .replace(/&#x([0-9a-f]+);/gi, (_all, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
        .replace(/&#(\d+);/g, (_all, dec: string) => String.fromCodePoint(Number(dec)))
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&');
      if (/^(href|src|action|background|srcset|xlink:href)$/i.test(attribute!)) links.add(value);
      if (/^on/i.test(attribute!)) handlers.push(`${attribute}=${value}`);
    }
  }
  return { tags, links, handlers };
}

describe('e-mail safety (faults)', () => {
  let smtp: TestSmtpServer;
  let p: PipelineHarness;
  let baseline: ReceivedMail;
  let inputs = 0;

  /** Waits until `count` e-mails arrived and the pipeline has nothing left to send (so no more will come). */
  async function settle(count: number): Promise<ReceivedMail[]> {
    await smtp.waitFor(count, 20_000);
    await waitUntilSettled(p.db, 20_000);
    return smtp.received;
  }

  beforeAll(async () => {
    smtp = await startSmtpServer();
    p = await startPipeline(smtp, { INSTANT_COALESCE_MS: String(COALESCE_MS) });
    // A benign e-mail: the headers and markup every e-mail has.
    const org = await p.createOrg({ name: 'Baseline Org' });
    await p.createRule(org.key, { name: 'Baseline rule', scope: 'new_open_port_detected', members: [org.members[0]!.team_member_uuid] });
    expect((await p.ingest(makeEvent(org.id, { url: 'https://platform.example.com/findings/baseline' }))).statusCode).toBe(202);
    baseline = (await settle(1))[0]!;
    smtp.received.length = 0;
  });
  afterAll(async () => {
    await p.stop();
    await smtp.close();
    console.info(`abuse-email: ${inputs} inputs`);
  });

  it('line breaks in names and event fields add no header and no recipient', async () => {
    const headerKeys = (mail: ReceivedMail) => mail.parsed.headerLines.map((h) => h.key).sort();
    const expected = new Map<string, { address: string; org: string }>();
    const refused: string[] = [];
    for (const [i, attack] of HEADER_ATTACKS.entries()) {
      inputs++;
      const created = await p.admin('POST', '/admin/v1/organizations', { name: `Acme ${i}${attack}`, plan: { rate_limit_per_second: 1000, rate_limit_per_minute: 10_000 } });
      expect(created.statusCode, created.body).toBe(201);
      const orgId = created.json().id as string;
      const address = `member-${i}-${randomUUID().slice(0, 8)}@victim.example.com`;
      let member = await p.admin('POST', `/admin/v1/organizations/${orgId}/members`, { email: address, name: `Member ${i}${attack}` });
      if (member.statusCode === 400) {
        refused.push(`member name ${JSON.stringify(attack)}`);
        member = await p.admin('POST', `/admin/v1/organizations/${orgId}/members`, { email: address, name: `Member ${i}` });
      }
      expect(member.statusCode, member.body).toBe(201);
      const key = (await p.admin('POST', `/admin/v1/organizations/${orgId}/api-keys`, { name: 'k' })).json().key as string;
      await p.createRule(key, { name: `Rule ${i}${attack}`, scope: 'new_open_port_detected', members: [member.json().team_member_uuid] });
      expected.set(address, { address, org: orgId });
      // Each field on its own, so one refused field does not hide the others.
      const fields: Array<Record<string, unknown>> = [
        { title: `Title ${i}${attack}` },
        { asset: `host${i}.example.com${attack}` },
        { asset_type: `subdomain${attack}` },
        { summary: `Summary ${i}${attack}` },
        { tags: [`tag${attack}`] },
        { data: { note: attack, [`key${attack}`]: 1 } },
        { url: `https://platform.example.com/findings/${i}?q=${attack}` },
      ];
      let accepted = 0;
      for (const overrides of fields) {
        inputs++;
        const response = await p.ingest(makeEvent(orgId, overrides));
        if (response.statusCode === 202) accepted++;
        else {
          expectApplicationError(response, 400, JSON.stringify(overrides));
          refused.push(`${Object.keys(overrides)[0]} ${JSON.stringify(attack)}`);
        }
      }
      // A plain event too, so every organization gets at least one e-mail.
      expect((await p.ingest(makeEvent(orgId))).statusCode).toBe(202);
      expect(accepted + 1).toBeGreaterThan(0);
    }
    const mails = await settle(expected.size);
    console.info(`abuse-email: ${mails.length} e-mails for ${HEADER_ATTACKS.length} attacks; refused at the door: ${refused.length}`);
    const baselineKeys = [...new Set(headerKeys(baseline))];
    for (const mail of mails) {
      const context = `${mail.subject} → ${mail.to.join(',')}`;
      // The envelope names the one member and nobody else.
      expect(mail.to, context).toHaveLength(1);
      expect(expected.has(mail.to[0]!), context).toBe(true);
      expect(mail.to.join(',')).not.toContain('attacker.example');
      // The same header fields as any e-mail, each once: no Bcc, Cc, second To, Content-Type or X-Injected.
      const keys = headerKeys(mail);
      expect(new Set(keys), context).toEqual(new Set(baselineKeys));
      expect(keys.length, `${context}: ${keys.join(' ')}`).toBe(new Set(keys).size);
      expect(mail.parsed.bcc, context).toBeUndefined();
      expect(mail.parsed.cc, context).toBeUndefined();
      const to = mail.parsed.to && !Array.isArray(mail.parsed.to) ? mail.parsed.to.value.map((a) => a.address) : [];
      expect(to, context).toEqual(mail.to);
      // The subject is one line, and no raw header line carries an attacker's address.
      expect(mail.subject, context).not.toMatch(/[\r\n\u2028\u2029\u0085]/);
      for (const line of mail.parsed.headerLines) {
        // The subject names the organization, and List-Id the rule, as text: one line, the name quoted.
        if (line.key === 'subject') continue;
        if (line.key === 'list-id') {
          expect(line.line, context).toMatch(/^List-Id: "[^"\r\n]*" <[0-9a-f-]{36}\.rules\.[^>\s]+>$/i);
          continue;
        }
        expect(line.line, `${context}: ${line.line}`).not.toContain('attacker.example');
      }
      // Nothing injected reached the HTML part as markup.
      expect(mail.html).not.toContain('id="injected-body"');
      expect(mail.html).not.toContain('id="injected-script"');
      expect(mail.html).not.toMatch(/<script/i);
    }
    // Every organization got its e-mail.
    expect(new Set(mails.map((mail) => mail.to[0]))).toEqual(new Set(expected.keys()));
  });

  it('HTML, scripts and links in event text become text; only the event URL is a link', async () => {
    smtp.received.length = 0;
    const org = await p.createOrg({ name: 'Html <b>Org</b> <script>alert(1)</script>' });
    await p.createRule(org.key, { name: 'Rule <img src=x onerror=alert(1)>', scope: 'new_open_port_detected', members: [org.members[0]!.team_member_uuid] });
    const eventUrls: string[] = [];
    let accepted = 0;
    for (const [i, attack] of HTML_ATTACKS.entries()) {
      const url = `https://platform.example.com/findings/html-${i}`;
      const fields: Array<Record<string, unknown>> = [
        { title: `T${i} ${attack}`, url },
        { summary: `S${i} ${attack}\nhttps://evil.example/bare-link-${i}`, url },
        { asset: `a${i}.example.com ${attack}`, asset_type: attack, tags: [attack], data: { [attack]: attack, html: attack }, url },
      ];
      for (const overrides of fields) {
        inputs++;
        const response = await p.ingest(makeEvent(org.id, overrides));
        if (response.statusCode === 202) {
          accepted++;
          eventUrls.push(url);
        } else expectApplicationError(response, 400, JSON.stringify(overrides));
      }
    }
    // URLs that are not http(s), or that try to leave their attribute, never become links.
    for (const url of ['javascript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox(1)', 'https://ok.example/a"onmouseover="alert(1)', "https://ok.example/'><script>alert(1)</script>", 'https://ok.example/a b', '//evil.example/protocol-relative', 'ftp://evil.example/file']) {
      inputs++;
      const response = await p.ingest(makeEvent(org.id, { title: `URL ${url}`, url }));
      if (response.statusCode === 202) accepted++;
      else expectApplicationError(response, 400, url);
    }
    expect(accepted).toBeGreaterThan(HTML_ATTACKS.length);
    const mails = await settle(1);
    const base = markup(baseline.html);
    // The footer's unsubscribe link is the template's, with a token of its rule and member.
    const template = (link: string) => link.replace(/\/unsubscribe\/[A-Za-z0-9_-]{64}$/, '/unsubscribe/{token}');
    const baseLinks = [...base.links].filter((link) => !link.includes('/findings/')).map(template);
    expect(baseLinks.filter((link) => link.endsWith('/unsubscribe/{token}'))).toHaveLength(1);
    for (const mail of mails) {
      const found = markup(mail.html);
      // No tag the template does not itself use, no event handler, no link but the template's and the events' own.
      expect([...found.tags].filter((tag) => !base.tags.has(tag)), 'new tags').toEqual([]);
      expect(found.handlers).toEqual(base.handlers);
      const foreign = [...found.links].filter((link) => !baseLinks.includes(template(link)) && !/^https:\/\/(platform|ok)\.example(\.com)?\//.test(link));
      expect(foreign, 'links that are neither the template\'s nor an event URL').toEqual([]);
      for (const link of found.links) {
        expect(link).not.toMatch(/^\s*(javascript|data|vbscript):/i);
        expect(link).not.toContain('evil.example');
        // Only web links (or the template's own): the attribute held, whatever the URL spelled.
        if (!baseLinks.includes(link)) expect(link).toMatch(/^https?:\/\/[^\s"<>]+$/);
      }
      // The text is there, escaped: the attacks were rendered, not dropped.
      expect(mail.html).toContain('&lt;script&gt;');
      expect(mail.html).not.toMatch(/<script/i);
      expect(mail.html).not.toMatch(/<img[^>]*evil\.example/i);
      expect(mail.html).not.toMatch(/<iframe|<svg|<style>body/i);
      expect(mail.subject).not.toMatch(/[\r\n]/);
    }
    expect(mails.length).toBeGreaterThanOrEqual(1);
    expect(eventUrls.length).toBeGreaterThan(0);
  });

  it('refuses member addresses that could carry a second recipient or a header (400 on email)', async () => {
    const org = await p.createOrg({ name: 'Addresses' });
    const bad = [
      'a@b.com, c@d.com',
      'a@b.com,c@d.com',
      'a@b.com; c@d.com',
      'a@b.com c@d.com',
      'a@b.com\r\nBcc: x@y.com',
      'a@b.com\nBcc: x@y.com',
      'a@b.com\rBcc: x@y.com',
      'a@b.com\r\n',
      '\r\na@b.com',
      'a@b.com\u2028Bcc: x@y.com',
      'a@b.com\u0085',
      'a\u0000@b.com',
      'a@b.com\tc@d.com',
      '"Evil" <a@b.com>',
      'Evil <a@b.com>',
      'a@b.com <c@d.com>',
      '<a@b.com>',
      '"a@b.com, c@d.com"@e.com',
      '"a\r\nBcc: x"@b.com',
      'a@b.com%0d%0aBcc:x@y.com',
      'a@b.com\\r\\nBcc: x@y.com',
      '=?UTF-8?Q?a=0D=0ABcc:x@y.com?=',
      'a@b@c.com',
      'a(comment)@b.com',
      'a@[127.0.0.1]',
      'a@localhost',
      'a@-b.com',
      'a@b.com.',
      '.a@b.com',
      'a..b@c.com',
      '@b.com',
      'a@',
      '',
      ' ',
      `${'a'.repeat(65)}@b.com`,
      `a@${'b'.repeat(64)}.com`,
      // A domain of 258 characters; an address of 255 (SMTP paths hold 254); one of 318.
      `a@${Array.from({ length: 51 }, () => 'bbbb').join('.')}.com`,
      `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`,
      `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(57)}.com`,
      'a'.repeat(100_000),
      'ä@b.com',
      'a@bü.com',
    ];
    for (const email of bad) {
      inputs++;
      const response = await p.admin('POST', `/admin/v1/organizations/${org.id}/members`, { email, name: 'x' });
      expectApplicationError(response, 400, JSON.stringify(email.slice(0, 80)));
      // NUL is refused for the whole body before the fields are read (decisions: no NUL in text).
      expect(paramsOf(response), JSON.stringify(email.slice(0, 80))).toEqual([email.includes('\u0000') ? 'body' : 'email']);
    }
    // Not a string at all.
    for (const email of [['a@b.com', 'c@d.com'], { address: 'a@b.com' }, 42, null, true]) {
      inputs++;
      const response = await p.admin('POST', `/admin/v1/organizations/${org.id}/members`, { email });
      expect(paramsOf(response), JSON.stringify(email)).toEqual(['email']);
    }
    // None of them was stored: the organization has only its own member.
    const members = (await p.admin('GET', `/admin/v1/organizations/${org.id}/members`)).json() as Array<{ email: string }>;
    expect(members.map((m) => m.email)).toEqual([org.members[0]!.email]);
    // Plain addresses, surrounding spaces trimmed, still work.
    for (const email of ['plain@example.com', "o'brien+tag@sub.example.co.uk", '  spaced@example.com  ', `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`]) {
      const response = await p.admin('POST', `/admin/v1/organizations/${org.id}/members`, { email });
      expect(response.statusCode, `${email}: ${response.body}`).toBe(201);
      expect(response.json().email).toBe(email.trim());
    }
  });
});
