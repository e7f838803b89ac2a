import { SCOPES } from '@notify/core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EventDetails } from '@notify/core';
import type { MailRenderer, RenderedMail } from './mail-content';
import { MASK } from './mask-secrets';
import { createMailRenderer } from './renderer';
import { hrefs, makeContent, makeEvent, visibleText } from './testing/fixtures';
import { expectNoSecret, LEAKED } from './testing/secrets';

function secretEvent(scope: EventDetails['scope'], overrides: Partial<EventDetails> = {}): EventDetails {
  return makeEvent({
    scope,
    asset: 'acme.example',
    title: `Card ${LEAKED.card} found in a paste`,
    summary: `Credentials posted: password=${LEAKED.password} token ${LEAKED.token}`,
    url: `https://platform.example/findings/7?api_key=${LEAKED.apiKey}`,
    tags: ['leak', LEAKED.token],
    data: {
      email: 'bob@acme.example',
      password: LEAKED.password,
      password_hash: LEAKED.hash,
      card_number: LEAKED.card,
      cvv: '9137',
      source: { site: 'paste.example', credentials: { apiKey: LEAKED.apiKey, note: 'rotated?' } },
      tokens: [LEAKED.token],
      raw: `user=bob pass=${LEAKED.password}`,
    },
    ...overrides,
  });
}

function partsOf(mail: RenderedMail): Record<string, string> {
  return { subject: mail.subject, text: mail.text, html: mail.html, 'visible html': visibleText(mail.html) };
}

let renderer: MailRenderer;
beforeAll(async () => {
  renderer = await createMailRenderer();
});

describe('secrets in e-mails', () => {
  it.each(SCOPES)('an instant alert of %s shows no secret in its subject, text or HTML', (scope) => {
    const mail = renderer.render(makeContent({ scope, events: [secretEvent(scope)] }));
    expectNoSecret(partsOf(mail));
    // Still enough to recognise the finding.
    expect(mail.subject).toContain('•••• 1111');
    expect(mail.text).toContain('email: bob@acme.example');
    expect(mail.text).toContain(`password: Tr0u${MASK}-9`);
    expect(mail.text).toContain(`cvv: ${MASK}`);
    expect(mail.text).toContain('card_number: •••• 1111');
    expect(mail.text).toContain(`"apiKey":"ak_t${MASK}Yb"`);
    expect(mail.text).toContain(`"site":"paste.example"`);
  });

  it.each(['new_employee_credential_detected', 'new_client_credential_detected', 'new_payment_credential_detected', 'new_email_breach_detected'] as const)(
    'a daily digest of %s shows no secret, whichever event is listed',
    (scope) => {
      const events = Array.from({ length: 12 }, (_, i) => secretEvent(scope, { asset: `host${i % 3}.acme.example`, severity: i % 2 ? 'high' : 'critical' }));
      const mail = renderer.render(makeContent({ scope, kind: 'digest', frequency: 'daily', events, period: { start: new Date('2026-11-19T00:00:00Z'), end: new Date('2026-11-20T00:00:00Z') } }));
      expectNoSecret(partsOf(mail));
      expect(mail.text.match(/•••• 1111/g)?.length).toBeGreaterThanOrEqual(12);
    },
  );

  it("links to the finding whole when its path ends in an id (a UUID, a long number), in the HTML and the text", () => {
    for (const url of ['https://platform.example.com/findings/b3d1f0e2-9c4a-4a7b-8f1e-2d6c5b4a3f21', 'https://platform.example.com/orgs/acme/findings/98765432101234567890']) {
      const mail = renderer.render(makeContent({ events: [makeEvent({ url })] }));
      expect(hrefs(mail.html)).toContain(url);
      expect(mail.text).toContain(`  ${url}`);
    }
  });

  it('the event handed in keeps its values (only the e-mail is masked)', () => {
    const event = secretEvent('new_employee_credential_detected');
    renderer.render(makeContent({ events: [event] }));
    expect(event.data?.password).toBe(LEAKED.password);
    expect(event.title).toContain(LEAKED.card);
  });
});
