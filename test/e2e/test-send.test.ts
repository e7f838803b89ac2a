import { describe, expect, it } from 'vitest';
import { makeEvent, usePipeline } from '../support/pipeline';
import { waitUntilSettled } from '../support/wait';

const RULES = '/v1/platform/notification-rules';

describe('POST /v1/platform/notification-rules/{rule_id}/test: a test e-mail now', () => {
  const t = usePipeline();

  const mailsTo = (email: string) => t.smtp.received.filter((mail) => mail.to.includes(email));
  const testSend = (key: string, ruleId: string, body?: unknown) => t.p.api(key, 'POST', `${RULES}/${ruleId}/test`, body);

  it("sends the rule's latest matching stored event to every subscribed member, [Test] first, and leaves the rule's periods alone", async () => {
    const org = await t.p.createOrg({ memberCount: 2, name: 'Acme' });
    const [a, b] = org.members;
    const rule = await t.p.createRule(org.key, {
      name: 'Critical ports', scope: 'new_open_port_detected', frequency: 'daily', members: [a!.team_member_uuid, b!.team_member_uuid],
      strategy: { must: [{ name: 'severity', type: 'gte', value: 'high' }] },
    });
    // Newest first: a low one (not matching) after the matching one.
    await t.p.ingest({ events: [makeEvent(org.id, { title: 'Port 22 open on old.acme.example', severity: 'high' })] });
    await waitUntilSettled(t.p.db);
    await t.p.ingest({ events: [makeEvent(org.id, { title: 'Port 80 open on web.acme.example', severity: 'low' })] });
    await waitUntilSettled(t.p.db);

    const response = await testSend(org.key, rule.id);
    expect(response.statusCode, response.body).toBe(202);
    expect(response.headers['service-request-id']).toBeDefined();
    const { deliveries } = response.json() as { deliveries: Array<{ id: string; team_member_uuid: string; email: string; status: string }> };
    expect(deliveries.map((d) => d.email).sort()).toEqual([a!.email, b!.email].sort());
    expect(deliveries.every((d) => d.status === 'pending')).toBe(true);
    await expect.poll(() => mailsTo(a!.email).length + mailsTo(b!.email).length).toBe(2);
    const [mail] = mailsTo(a!.email);
    expect(mail!.subject).toBe('[Test] [Acme] 1 new open port detected: Port 22 open on old.acme.example');
    expect(mail!.text).toContain('This is a test e-mail of the rule');
    expect(mail!.messageId).toBe(`<${deliveries.find((d) => d.email === a!.email)!.id}@notify.test>`);
    await waitUntilSettled(t.p.db);

    // The delivery log shows them as tests; the day's digest still carries the matching event.
    const log = (await t.p.api(org.key, 'GET', `${RULES}/${rule.id}/deliveries?kind__in=test`)).json();
    expect(log.result_count).toBe(2);
    expect(log.results.every((item: { kind: string; status: string; events: number }) => item.kind === 'test' && item.status === 'sent' && item.events === 1)).toBe(true);
    const flush = await t.p.admin('POST', `/admin/v1/notification-rules/${rule.id}/flush`);
    expect(flush.json()).toEqual({ matches: 1, deliveries: 2 });
    await expect.poll(() => mailsTo(a!.email).length).toBe(2);
    expect(mailsTo(a!.email)[1]!.subject).not.toContain('[Test]');
  });

  it('sends a labelled sample event when nothing stored matches, to the members asked for only', async () => {
    const org = await t.p.createOrg({ memberCount: 2 });
    const [a, b] = org.members;
    const rule = await t.p.createRule(org.key, { name: 'Whois', scope: 'asset_whois_changed', members: [a!.team_member_uuid, b!.team_member_uuid] });
    const response = await testSend(org.key, rule.id, { members: [b!.team_member_uuid] });
    expect(response.statusCode, response.body).toBe(202);
    expect(response.json().deliveries).toHaveLength(1);
    await expect.poll(() => mailsTo(b!.email).length).toBe(1);
    const mail = mailsTo(b!.email)[0]!;
    expect(mail.subject).toMatch(/^\[Test\] .*Sample event: /);
    expect(mail.text).toContain('A sample, not a real finding');
    expect(mailsTo(a!.email)).toHaveLength(0);
  });

  it('refuses members outside the rule, unsubscribed ones, a bad body, and allows 5 test sends a minute (429 code 10429 with Retry-After beyond)', async () => {
    const org = await t.p.createOrg({ memberCount: 3 });
    const [a, b, outsider] = org.members;
    const rule = await t.p.createRule(org.key, { name: 'R', scope: 'asset_dns_changed', members: [a!.team_member_uuid, b!.team_member_uuid] });
    await t.p.db.pool.query('UPDATE notification_rule_members SET unsubscribed_at = now() WHERE rule_id = $1 AND team_member_id = $2', [rule.id, b!.team_member_uuid]);
    const unsubscribed = await testSend(org.key, rule.id, { members: [b!.team_member_uuid] });
    expect(unsubscribed.json()).toMatchObject({ code: 10400, parameters: [{ param: 'members', details: [`"${b!.team_member_uuid}" has unsubscribed from this notification rule.`] }] });
    const outside = await testSend(org.key, rule.id, { members: [outsider!.team_member_uuid] });
    expect(outside.statusCode).toBe(400);
    expect(outside.json()).toMatchObject({ code: 10400, parameters: [{ param: 'members', details: [`"${outsider!.team_member_uuid}" is not a member of this notification rule.`] }] });
    const malformed = await testSend(org.key, rule.id, { members: ['nope'] });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().parameters[0].param).toMatch(/^members/);
    expect((await testSend(org.key, rule.id, { members: 'all' })).statusCode).toBe(400);
    // Refusals spent no test send: five go through, the sixth is refused.
    for (let i = 0; i < 5; i++) expect((await testSend(org.key, rule.id, { members: [a!.team_member_uuid] })).statusCode).toBe(202);
    const sixth = await testSend(org.key, rule.id);
    expect(sixth.statusCode).toBe(429);
    expect(sixth.json()).toMatchObject({ code: 10429 });
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(sixth.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Another rule has its own budget.
    const other = await t.p.createRule(org.key, { name: 'R2', scope: 'asset_dns_changed', members: [a!.team_member_uuid] });
    expect((await testSend(org.key, other.id)).statusCode).toBe(202);
    await waitUntilSettled(t.p.db);
  });

  it("answers 404 code 10404 for another organization's rule and an unknown one, sending nothing", async () => {
    const [mine, theirs] = [await t.p.createOrg(), await t.p.createOrg()];
    const rule = await t.p.createRule(theirs.key, { name: 'Theirs', scope: 'asset_dns_changed', members: [theirs.members[0]!.team_member_uuid] });
    const before = t.smtp.received.length;
    for (const id of [rule.id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const response = await testSend(mine.key, id);
      expect(response.statusCode, id).toBe(404);
      expect(response.json().code).toBe(10404);
    }
    await waitUntilSettled(t.p.db);
    expect(t.smtp.received.length).toBe(before);
  });
});
