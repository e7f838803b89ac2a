/**
 * Credential and breach findings carry the leaked secret in `data`; what reaches the inbox, through
 * the whole pipeline and a real SMTP server, shows none of it (docs/api-guide.md: secrets in e-mails), while
 * the stored event keeps it.
 */
import { describe, expect, it } from 'vitest';
import { expectNoSecret, LEAKED, type ReceivedMail } from '@notify/mail/testing';
import { makeEvent, usePipeline } from '../support/pipeline';

function partsOf(mail: ReceivedMail): Record<string, string> {
  const headers = [...mail.parsed.headers.entries()].map(([name, value]) => `${name}: ${JSON.stringify(value)}`).join('\n');
  const rawHeaders = mail.parsed.headerLines.map((line) => line.line).join('\n');
  return { subject: mail.subject, headers, 'raw headers': rawHeaders, text: mail.text, html: mail.html };
}

describe('secrets in e-mails, end to end', () => {
  const t = usePipeline();

  const secretEvent = (orgId: string, scope: string) =>
    makeEvent(orgId, {
      scope,
      asset: 'acme.example',
      title: `Card ${LEAKED.card} found in a paste`,
      summary: `password=${LEAKED.password} token ${LEAKED.token}`,
      url: `https://platform.example/findings/7?api_key=${LEAKED.apiKey}`,
      data: { email: 'bob@acme.example', password: LEAKED.password, password_hash: LEAKED.hash, card: { number: LEAKED.card, cvv: '9137' }, credentials: { apiKey: LEAKED.apiKey } },
    });

  it('an instant alert and a digest of credential findings show no secret in any part or header', async () => {
    const org = await t.p.createOrg({ memberCount: 2 });
    const [instant, digest] = org.members;
    await t.p.createRule(org.key, { name: 'Employee credentials', scope: 'new_employee_credential_detected', members: [instant!.team_member_uuid] });
    const daily = await t.p.createRule(org.key, {
      name: 'Payment credentials', scope: 'new_payment_credential_detected', frequency: 'daily', delivery_hour: 6, members: [digest!.team_member_uuid],
    });
    const events = [secretEvent(org.id, 'new_employee_credential_detected'), secretEvent(org.id, 'new_payment_credential_detected'), secretEvent(org.id, 'new_payment_credential_detected')];
    const ingest = await t.p.ingest({ events });
    expect(ingest.statusCode, ingest.body).toBe(202);
    await t.smtp.waitFor(1);
    expect((await t.p.admin('POST', `/admin/v1/notification-rules/${daily.id}/flush`)).statusCode).toBe(202);
    await t.smtp.waitFor(2);

    const [alert] = t.smtp.received.filter((mail) => mail.to.includes(instant!.email));
    const [summary] = t.smtp.received.filter((mail) => mail.to.includes(digest!.email));
    for (const mail of [alert!, summary!]) {
      expectNoSecret(partsOf(mail));
      expect(mail.text).toContain('•••• 1111');
      expect(mail.text).toContain('bob@acme.example');
    }
    expect(alert!.subject).toContain('Card •••• 1111 found in a paste');

    // The record keeps what the scanner found.
    const { rows } = await t.p.db.pool.query(`SELECT data FROM events WHERE organization_id = $1`, [org.id]);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.data.password).toBe(LEAKED.password);
  });
});
