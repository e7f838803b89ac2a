import { describe, expect, it } from 'vitest';
import { makeEvent, usePipeline } from '../support/pipeline';
import { waitUntilSettled } from '../support/wait';

const RULES = '/v1/platform/notification-rules';

describe('bounces: an address refused for good at RCPT TO is not written to again until an operator clears it', () => {
  const t = usePipeline();

  const members = async (orgId: string) =>
    Object.fromEntries(((await t.p.admin('GET', `/admin/v1/organizations/${orgId}/members`)).json() as Array<{ email: string; bouncing: unknown }>).map((m) => [m.email, m.bouncing]));
  const statuses = async (key: string, ruleId: string) =>
    ((await t.p.api(key, 'GET', `${RULES}/${ruleId}/deliveries`)).json().results as Array<{ email: string; status: string; error: string | null }>)
      .map(({ email, status, error }) => ({ email, status, error }));

  it('marks the member bouncing on 550 5.1.1, suppresses their next e-mails without talking to the server, and sends again once cleared', async () => {
    const org = await t.p.createOrg({ memberCount: 2 });
    const [gone, kept] = org.members;
    const rule = await t.p.createRule(org.key, { name: 'Ports', scope: 'new_open_port_detected', members: [gone!.team_member_uuid, kept!.team_member_uuid] });
    t.smtp.setRecipientVerdict((address) => (address === gone!.email ? { code: 550, message: '5.1.1 <' + address + '>: user unknown' } : 'accept'));

    expect((await t.p.ingest({ events: [makeEvent(org.id)] })).statusCode).toBe(202);
    await expect.poll(() => t.smtp.received.filter((mail) => mail.to.includes(kept!.email)).length).toBe(1);
    await waitUntilSettled(t.p.db);
    expect(await statuses(org.key, rule.id)).toEqual(expect.arrayContaining([
      { email: gone!.email, status: 'failed', error: 'rejected: SMTP 550' },
      { email: kept!.email, status: 'sent', error: null },
    ]));
    const bouncing = (await members(org.id))[gone!.email] as { since: string; reply: string };
    expect(bouncing.reply).toContain('5.1.1');
    expect(Number.isNaN(Date.parse(bouncing.since))).toBe(false);
    expect((await members(org.id))[kept!.email]).toBeNull();

    // The next event: the bouncing address is not offered to the server at all.
    const offered = t.smtp.recipients.filter((address) => address === gone!.email).length;
    expect((await t.p.ingest({ events: [makeEvent(org.id)] })).statusCode).toBe(202);
    await expect.poll(() => t.smtp.received.filter((mail) => mail.to.includes(kept!.email)).length).toBe(2);
    await waitUntilSettled(t.p.db);
    expect(t.smtp.recipients.filter((address) => address === gone!.email)).toHaveLength(offered);
    const second = (await statuses(org.key, rule.id)).filter((row) => row.email === gone!.email);
    expect(second.map((row) => row.status).sort()).toEqual(['failed', 'suppressed']);
    expect(second.find((row) => row.status === 'suppressed')!.error).toBe('suppressed: the address bounced before');

    // The operator fixed the mailbox and clears the mark: the next e-mail goes out.
    t.smtp.setRecipientVerdict(() => 'accept');
    const cleared = await t.p.admin('POST', `/admin/v1/organizations/${org.id}/members/${gone!.team_member_uuid}/clear-bounce`);
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json()).toMatchObject({ team_member_uuid: gone!.team_member_uuid, bouncing: null });
    expect((await t.p.ingest({ events: [makeEvent(org.id)] })).statusCode).toBe(202);
    await expect.poll(() => t.smtp.received.filter((mail) => mail.to.includes(gone!.email)).length).toBe(1);
  });

  it('leaves the address alone on a temporary refusal (450) or a refused message (554 at DATA)', async () => {
    const org = await t.p.createOrg({ memberCount: 2 });
    const [busy, refused] = org.members;
    await t.p.createRule(org.key, { name: 'Ports', scope: 'new_open_port_detected', members: [busy!.team_member_uuid, refused!.team_member_uuid] });
    let busyRefusals = 0;
    t.smtp.setRecipientVerdict((address) => (address === busy!.email && busyRefusals++ === 0 ? { code: 450, message: '4.2.1 mailbox busy' } : 'accept'));
    t.smtp.setVerdict(({ to }) => (to.includes(refused!.email) ? { code: 554, message: '5.7.1 message refused' } : 'accept'));
    try {
      expect((await t.p.ingest({ events: [makeEvent(org.id)] })).statusCode).toBe(202);
      await expect.poll(() => t.smtp.received.filter((mail) => mail.to.includes(busy!.email)).length, { timeout: 30_000 }).toBe(1);
      await waitUntilSettled(t.p.db);
      expect(await members(org.id)).toEqual({ [busy!.email]: null, [refused!.email]: null });
    } finally {
      t.smtp.setRecipientVerdict(() => 'accept');
      t.smtp.setVerdict(() => 'accept');
    }
  });

  it('refuses to clear a member of another organisation or an unknown one', async () => {
    const [a, b] = [await t.p.createOrg(), await t.p.createOrg()];
    const foreign = await t.p.admin('POST', `/admin/v1/organizations/${a.id}/members/${b.members[0]!.team_member_uuid}/clear-bounce`);
    expect(foreign.statusCode).toBe(404);
    const malformed = await t.p.admin('POST', `/admin/v1/organizations/${a.id}/members/not-a-uuid/clear-bounce`);
    expect(malformed.statusCode).toBe(404);
  });
});
