import { describe, expect, it } from 'vitest';
import { flushSettled, ingestAccepted, mailsFor, makeEvent, usePipeline } from '../support/pipeline';
import { waitUntilSettled } from '../support/wait';

const RULES = '/v1/platform/notification-rules';
const HOUR = 3_600_000;

describe('one e-mail per finding: renotify_after_hours end to end', () => {
  // The pipeline's clock: a finding is news again once its hours have passed. It starts at 10:00
  // UTC today, so the hours the tests step through never cross a daily rule's 09:00 (a repeat
  // recorded after it falls in the next day's period, which a flush of this day's does not count).
  let clock = Math.floor(Date.now() / (24 * HOUR)) * 24 * HOUR + 10 * HOUR;
  const t = usePipeline({}, { now: () => new Date(clock) });

  const mailsTo = (email: string) => mailsFor(t.smtp, email);
  const ingest = (events: unknown[]) => ingestAccepted(t.p, events);
  const flush = (ruleId: string) => flushSettled(t.p, ruleId);

  it('leaves repeats of a finding out of digests within the hours, counts them, and takes it as news after', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    const rule = await t.p.createRule(org.key, {
      name: 'Ports', scope: 'new_open_port_detected', frequency: 'daily', renotify_after_hours: 24, members: [member.team_member_uuid],
    });
    expect(rule.renotify_after_hours).toBe(24);
    const finding = (title: string, fingerprint: string | null) => makeEvent(org.id, { title, fingerprint });

    await ingest([finding('first report', 'db1.example.com:5432/tcp')]);
    expect(await flush(rule.id)).toEqual({ matches: 1, deliveries: 1 });
    expect(mailsTo(member.email)[0]!.html).toContain('first report');

    clock += 2 * HOUR;
    await ingest([finding('reported again', 'db1.example.com:5432/tcp'), finding('another finding', 'web.example.com:443/tcp')]);
    expect(await flush(rule.id)).toEqual({ matches: 1, deliveries: 1 });
    const second = mailsTo(member.email)[1]!;
    expect(second.html).toContain('another finding');
    expect(second.html).not.toContain('reported again');
    expect(second.text).toContain('1 repeat of findings already e-mailed lately left out.');

    // 24 hours after it was last news, the finding is news again.
    clock += 23 * HOUR;
    await ingest([finding('news again', 'db1.example.com:5432/tcp')]);
    expect(await flush(rule.id)).toEqual({ matches: 1, deliveries: 1 });
    expect(mailsTo(member.email)[2]!.html).toContain('news again');

    // Without a fingerprint, scope, asset and title say which finding it is.
    await ingest([finding('no fingerprint', null)]);
    clock += HOUR;
    await ingest([finding('no fingerprint', null)]);
    expect(await flush(rule.id)).toEqual({ matches: 1, deliveries: 1 });
    expect(mailsTo(member.email)[3]!.text).toContain('1 repeat of findings already e-mailed lately left out.');
  });

  it('sends an instant rule one e-mail per finding, however often it is reported at once', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    await t.p.createRule(org.key, { name: 'Instant', scope: 'new_open_port_detected', renotify_after_hours: 1, members: [member.team_member_uuid] });
    const same = (title: string) => makeEvent(org.id, { title, fingerprint: 'rdp.example.com:3389/tcp' });
    // Five reports of one finding in one batch, and five more in concurrent requests.
    await Promise.all([ingest([1, 2, 3, 4, 5].map((i) => same(`batch ${i}`))), ...[6, 7, 8, 9, 10].map((i) => ingest([same(`single ${i}`)]))]);
    await expect.poll(() => mailsTo(member.email).length).toBe(1);
    await waitUntilSettled(t.p.db);
    const { rows } = await t.p.db.pool.query<{ status: string; n: number }>(
      `SELECT m.status, count(*)::int AS n FROM matches m JOIN notification_rules r ON r.id = m.rule_id WHERE r.organization_id = $1 GROUP BY m.status ORDER BY 1`,
      [org.id],
    );
    expect(rows).toEqual([{ status: 'delivered', n: 1 }, { status: 'repeat', n: 9 }]);
    expect(mailsTo(member.email)).toHaveLength(1);
  });

  it('takes renotify_after_hours on create and update, returns it everywhere, and refuses bad values', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!.team_member_uuid;
    const created = await t.p.createRule(org.key, { name: 'R', scope: 'asset_dns_changed', members: [member] });
    expect(created.renotify_after_hours).toBeNull();
    const put = (body: Record<string, unknown>) => t.p.api(org.key, 'PUT', `${RULES}/${created.id}`, { name: 'R', members: [member], enabled: true, ...body });
    expect((await put({ renotify_after_hours: 168 })).json()).toMatchObject({ renotify_after_hours: 168 });
    // Omitted on update: kept.
    expect((await put({})).json()).toMatchObject({ renotify_after_hours: 168 });
    expect((await t.p.api(org.key, 'GET', `${RULES}/${created.id}`)).json()).toMatchObject({ renotify_after_hours: 168 });
    expect((await t.p.api(org.key, 'GET', RULES)).json().results).toEqual([expect.objectContaining({ id: created.id, renotify_after_hours: 168 })]);
    expect((await put({ renotify_after_hours: null })).json()).toMatchObject({ renotify_after_hours: null });
    for (const [value, message] of [
      [0, 'Ensure this value is greater than or equal to 1.'],
      [8761, 'Ensure this value is less than or equal to 8760.'],
      ['24', 'A valid integer is required.'],
      [1.5, 'A valid integer is required.'],
    ] as const) {
      const response = await t.p.api(org.key, 'POST', RULES, { name: 'Bad', scope: 'asset_dns_changed', members: [member], renotify_after_hours: value });
      expect(response.statusCode).toBe(400);
      expect(response.json().parameters).toEqual([{ param: 'renotify_after_hours', details: [message] }]);
    }
  });
});
