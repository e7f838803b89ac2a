import { describe, expect, it } from 'vitest';
import type { ReceivedMail } from '@notify/mail/testing';
import { makeEvent, usePipeline } from '../support/pipeline';
import { waitUntilSettled } from '../support/wait';

const RULES = '/v1/platform/notification-rules';

describe("the delivery log: GET /v1/platform/notification-rules/{rule_id}/deliveries", () => {
  const t = usePipeline();

  const mailsTo = (email: string): ReceivedMail[] => t.smtp.received.filter((mail) => mail.to.includes(email));
  async function ingest(events: unknown[]): Promise<void> {
    const response = await t.p.ingest({ events });
    expect(response.statusCode, response.body).toBe(202);
  }
  const log = (key: string, ruleId: string, query = '') => t.p.api(key, 'GET', `${RULES}/${ruleId}/deliveries${query}`);

  it('lists every e-mail of a rule with the Message-ID it carried, its kind, period, events and status', async () => {
    const org = await t.p.createOrg({ memberCount: 2 });
    const [a, b] = org.members;
    const instant = await t.p.createRule(org.key, { name: 'Instant', scope: 'new_open_port_detected', members: [a!.team_member_uuid] });
    const daily = await t.p.createRule(org.key, { name: 'Daily', scope: 'asset_ssl_changed', frequency: 'daily', members: [a!.team_member_uuid, b!.team_member_uuid] });
    await ingest([makeEvent(org.id), makeEvent(org.id, { scope: 'asset_ssl_changed' }), makeEvent(org.id, { scope: 'asset_ssl_changed' })]);
    await expect.poll(() => mailsTo(a!.email).length).toBe(1);
    await waitUntilSettled(t.p.db);
    expect((await t.p.admin('POST', `/admin/v1/notification-rules/${daily.id}/flush`)).statusCode).toBe(202);
    await waitUntilSettled(t.p.db);

    const instantLog = await log(org.key, instant.id);
    expect(instantLog.statusCode).toBe(200);
    const [mail] = mailsTo(a!.email);
    expect(instantLog.json()).toEqual({
      page: 1, page_size: 50, result_count: 1,
      results: [{
        id: expect.any(String), team_member_uuid: a!.team_member_uuid, email: a!.email, kind: 'instant',
        period_start: expect.any(String), period_end: expect.any(String), events: 1, status: 'sent', attempts: 1,
        sent_at: expect.any(String), message_id: mail!.messageId, error: null,
      }],
    });
    const digests = (await log(org.key, daily.id)).json();
    expect(digests.result_count).toBe(2);
    for (const item of digests.results) expect(item).toMatchObject({ kind: 'digest', events: 2, status: 'sent' });
    const received = [...mailsTo(a!.email), ...mailsTo(b!.email)].map((m) => m.messageId);
    for (const item of digests.results) expect(received).toContain(item.message_id);

    expect((await log(org.key, daily.id, '?kind__in=instant')).json().result_count).toBe(0);
    expect((await log(org.key, daily.id, '?status__in=sent&kind__in=digest&page_size=1')).json()).toMatchObject({ result_count: 2, page_size: 1 });
    expect((await log(org.key, daily.id, `?sent_at__gte=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).json().result_count).toBe(0);
    const ordered = (await log(org.key, daily.id, '?ordering=email,-sent_at')).json();
    expect(ordered).toMatchObject({ code: 10400 });
    expect(ordered.parameters).toEqual([{ param: 'ordering', details: ['"email" is not a valid choice.'] }]);
    const bySent = (await log(org.key, daily.id, '?ordering=-sent_at')).json();
    expect(bySent.results[0].sent_at >= bySent.results[1].sent_at).toBe(true);
  });

  it('says why an e-mail failed in a short class and the reply code, never the server\'s words', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    const rule = await t.p.createRule(org.key, { name: 'Rejected', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    t.smtp.setVerdict(({ to }) => (to.includes(member.email) ? { code: 550, message: '5.1.1 <secret-host.internal> mailbox unavailable' } : 'accept'));
    try {
      await ingest([makeEvent(org.id)]);
      await waitUntilSettled(t.p.db);
    } finally {
      t.smtp.setVerdict(() => 'accept');
    }
    const [item] = (await log(org.key, rule.id)).json().results;
    expect(item).toMatchObject({ status: 'failed', sent_at: null, error: 'rejected: SMTP 550' });
    expect(JSON.stringify(item)).not.toContain('secret-host');
  });

  it("answers 404 for another organization's rule and for ids that are no rule, and 400 for bad filters", async () => {
    const a = await t.p.createOrg();
    const b = await t.p.createOrg();
    const rule = await t.p.createRule(a.key, { name: 'A', scope: 'new_open_port_detected', members: [a.members[0]!.team_member_uuid] });
    for (const [key, id] of [[b.key, rule.id], [a.key, '00000000-0000-4000-8000-000000000000'], [a.key, 'not-a-rule']] as const) {
      const response = await log(key, id);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ code: 10404, details: 'Notification rule not found.' });
    }
    const bad = await log(a.key, rule.id, '?status__in=lost&kind__in=fax&sent_at__gte=yesterday&page=0');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().parameters).toEqual(expect.arrayContaining([
      { param: 'status__in', details: ['"lost" is not a valid choice.'] },
      { param: 'kind__in', details: ['"fax" is not a valid choice.'] },
      { param: 'sent_at__gte', details: [expect.stringContaining('Datetime has wrong format.')] },
      { param: 'page', details: ['Ensure this value is greater than or equal to 1.'] },
    ]));
  });
});
