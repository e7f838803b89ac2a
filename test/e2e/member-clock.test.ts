import { describe, expect, it } from 'vitest';
import { ingestAccepted, mailsFor, makeEvent, usePipeline, type PipelineHarness } from '../support/pipeline';
import { pause, pipelineBacklog, waitUntilSettled } from '../support/wait';

const at = (iso: string) => new Date(iso).getTime();

/** PATCHes a member's clock through the operator API, expecting 200. */
async function setClock(p: PipelineHarness, orgId: string, memberId: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await p.admin('PATCH', `/admin/v1/organizations/${orgId}/members/${memberId}`, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

describe("each member's own clock: digests at their own delivery hour, quiet hours", () => {
  // The pipeline's clock, moved by the tests (and only forwards: the scheduler reads it every 100 ms).
  let clock = at('2026-10-24T10:00:00Z');
  const t = usePipeline({}, { now: () => new Date(clock) });
  const ingest = (events: unknown[]) => ingestAccepted(t.p, events);
  const mailsTo = (email: string) => mailsFor(t.smtp, email);
  /** Moves the clock and waits for what falls due then to be sent. */
  async function advanceTo(iso: string): Promise<void> {
    clock = at(iso);
    // Two scheduler ticks see the new time before "settled" means anything.
    await pause(250);
    await waitUntilSettled(t.p.db);
  }

  it('sends a daily digest to members in Tokyo and Berlin at 09:00 their time, across the end of Berlin summer time', async () => {
    const org = await t.p.createOrg({ memberCount: 2, timezone: 'UTC' });
    const [tokyo, berlin] = org.members as [typeof org.members[0], typeof org.members[0]];
    expect(await setClock(t.p, org.id, tokyo.team_member_uuid, { timezone: 'Asia/Tokyo' })).toMatchObject({ timezone: 'Asia/Tokyo', quiet_hours: null });
    await setClock(t.p, org.id, berlin.team_member_uuid, { timezone: 'Europe/Berlin' });
    const rule = await t.p.createRule(org.key, {
      name: 'Daily ports', scope: 'new_open_port_detected', frequency: 'daily', delivery_hour: 9, members: [tokyo.team_member_uuid, berlin.team_member_uuid],
    });

    // Saturday 24 October, 10:00 UTC; Berlin leaves summer time on Sunday at 03:00.
    await ingest([makeEvent(org.id, { title: 'Saturday finding' })]);
    await waitUntilSettled(t.p.db);

    // 09:00 in Tokyo is 00:00 UTC: the Tokyo member's digest, and nothing for Berlin yet.
    await advanceTo('2026-10-24T23:59:59Z');
    expect(mailsTo(tokyo.email)).toHaveLength(0);
    await advanceTo('2026-10-25T00:00:01Z');
    expect(mailsTo(tokyo.email)).toHaveLength(1);
    expect(mailsTo(tokyo.email)[0]!.html).toContain('Saturday finding');
    expect(mailsTo(tokyo.email)[0]!.text).toContain('Times are shown in Asia/Tokyo.');
    expect(mailsTo(berlin.email)).toHaveLength(0);

    await advanceTo('2026-10-25T05:00:00Z');
    await ingest([makeEvent(org.id, { title: 'Sunday finding' })]);
    await waitUntilSettled(t.p.db);
    // Sunday 09:00 in Berlin is now CET, 08:00 UTC (it was 07:00 UTC the day before).
    await advanceTo('2026-10-25T07:59:59Z');
    expect(mailsTo(berlin.email)).toHaveLength(0);
    await advanceTo('2026-10-25T08:00:01Z');
    expect(mailsTo(berlin.email)).toHaveLength(1);
    const berlinDigest = mailsTo(berlin.email)[0]!;
    expect(berlinDigest.html).toContain('Saturday finding');
    expect(berlinDigest.html).toContain('Sunday finding');
    expect(berlinDigest.text).toContain('Times are shown in Europe/Berlin.');
    expect(mailsTo(tokyo.email)).toHaveLength(1);

    // Monday 09:00 in Tokyo: the Sunday finding, once.
    await advanceTo('2026-10-26T00:00:01Z');
    expect(mailsTo(tokyo.email)).toHaveLength(2);
    expect(mailsTo(tokyo.email)[1]!.html).toContain('Sunday finding');
    expect(mailsTo(tokyo.email)[1]!.html).not.toContain('Saturday finding');
    await advanceTo('2026-10-26T08:00:01Z');
    expect(mailsTo(berlin.email)).toHaveLength(1);

    const { rows } = await t.p.db.pool.query<{ email: string; period_key: string }>(
      `SELECT email, period_key FROM deliveries WHERE rule_id = $1 ORDER BY period_key`, [rule.id],
    );
    expect(rows).toEqual([
      { email: tokyo.email, period_key: '20261025T000000Z' },
      { email: berlin.email, period_key: '20261025T080000Z' },
      { email: tokyo.email, period_key: '20261026T000000Z' },
    ]);
  });

  it('moves what a member is owed when their zone changes: no finding twice, none lost', async () => {
    await advanceTo('2026-11-02T10:00:00Z');
    const org = await t.p.createOrg({ memberCount: 3, timezone: 'Europe/Berlin' });
    const [mover, stays, tokyo] = org.members as [typeof org.members[0], typeof org.members[0], typeof org.members[0]];
    await setClock(t.p, org.id, tokyo.team_member_uuid, { timezone: 'Asia/Tokyo' });
    await t.p.createRule(org.key, {
      name: 'Daily', scope: 'new_open_port_detected', frequency: 'daily', delivery_hour: 9, members: org.members.map((member) => member.team_member_uuid),
    });
    await ingest([makeEvent(org.id, { title: 'Finding A' })]);
    await waitUntilSettled(t.p.db);
    await advanceTo('2026-11-03T00:00:01Z'); // Tokyo's 09:00
    await advanceTo('2026-11-03T08:00:01Z'); // Berlin's 09:00 (CET)
    for (const member of org.members) expect(mailsTo(member.email).map((mail) => mail.html.includes('Finding A'))).toEqual([true]);

    await advanceTo('2026-11-03T09:00:00Z');
    await ingest([makeEvent(org.id, { title: 'Finding B' })]);
    await waitUntilSettled(t.p.db);
    // The mover goes from Berlin (the organization's zone) to Tokyo, whose members are owed B too.
    await advanceTo('2026-11-03T10:00:00Z');
    await setClock(t.p, org.id, mover.team_member_uuid, { timezone: 'Asia/Tokyo' });
    // The match stage reloads the organization's rules, with their members' zones.
    await expect.poll(() => t.p.process.runtime.pipeline.match!.index.rulesFor(org.id, 'new_open_port_detected')[0]?.memberZones).toEqual(['Asia/Tokyo', 'Europe/Berlin']);
    await advanceTo('2026-11-03T11:00:00Z');
    await ingest([makeEvent(org.id, { title: 'Finding C' })]);
    await waitUntilSettled(t.p.db);

    await advanceTo('2026-11-04T00:00:01Z'); // Tokyo's 09:00: the mover and the Tokyo member
    for (const member of [mover, tokyo]) {
      const mails = mailsTo(member.email);
      expect(mails).toHaveLength(2);
      expect(mails[1]!.html).toContain('Finding B');
      expect(mails[1]!.html).toContain('Finding C');
      expect(mails[1]!.html).not.toContain('Finding A');
      expect(mails[1]!.text).toContain('Times are shown in Asia/Tokyo.');
    }
    // Each finding as often in the mover's e-mail as in the Tokyo member's: once.
    const times = (text: string, title: string) => text.split(title).length - 1;
    for (const title of ['Finding B', 'Finding C']) expect(times(mailsTo(mover.email)[1]!.text, title)).toBe(times(mailsTo(tokyo.email)[1]!.text, title));
    expect(mailsTo(stays.email)).toHaveLength(1);
    const counts = await t.p.db.pool.query<{ email: string; event_count: number }>(
      `SELECT d.email, d.event_count FROM deliveries d JOIN notification_rules r ON r.id = d.rule_id WHERE r.organization_id = $1 AND d.period_key = '20261104T000000Z' ORDER BY 1`,
      [org.id],
    );
    expect(counts.rows).toEqual([mover, tokyo].map((member) => ({ email: member.email, event_count: 2 })).sort((a, b) => a.email.localeCompare(b.email)));
    await advanceTo('2026-11-04T08:00:01Z'); // Berlin's 09:00: only the member who stayed
    expect(mailsTo(stays.email)).toHaveLength(2);
    expect(mailsTo(stays.email)[1]!.html).toContain('Finding B');
    expect(mailsTo(stays.email)[1]!.html).toContain('Finding C');
    expect(mailsTo(mover.email)).toHaveLength(2);
    expect(mailsTo(tokyo.email)).toHaveLength(2);
  });

  it('holds instant e-mails through quiet hours and sends them as one when they end; a critical event breaks through', async () => {
    // 00:00 in Berlin: inside 22-7.
    await advanceTo('2026-11-05T23:00:00Z');
    const org = await t.p.createOrg({ memberCount: 2, timezone: 'UTC' });
    const [sleeper, awake] = org.members as [typeof org.members[0], typeof org.members[0]];
    expect(await setClock(t.p, org.id, sleeper.team_member_uuid, { timezone: 'Europe/Berlin', quiet_hours: { start_hour: 22, end_hour: 7 } }))
      .toMatchObject({ timezone: 'Europe/Berlin', quiet_hours: { start_hour: 22, end_hour: 7 } });
    await t.p.createRule(org.key, { name: 'Instant', scope: 'new_open_port_detected', members: org.members.map((member) => member.team_member_uuid) });
    // An hourly rule of the same members: its digest falls due at 00:00 UTC, inside the quiet hours too.
    await t.p.createRule(org.key, { name: 'Hourly DNS', scope: 'asset_dns_changed', frequency: 'hourly', members: org.members.map((member) => member.team_member_uuid) });
    const hourly = (email: string) => mailsTo(email).filter((mail) => mail.subject.includes('Hourly digest'));
    const instant = (email: string) => mailsTo(email).filter((mail) => !mail.subject.includes('Hourly digest'));
    await ingest([makeEvent(org.id, { scope: 'asset_dns_changed', title: 'Night DNS change', severity: 'medium' })]);

    await ingest([makeEvent(org.id, { title: 'Night one', severity: 'medium' })]);
    await waitUntilSettled(t.p.db);
    await ingest([makeEvent(org.id, { title: 'Night two', severity: 'high' }), makeEvent(org.id, { title: 'Night three', severity: 'low' })]);
    // They join the burst window the first opened (one second); the clock then passes its end.
    await expect.poll(async () => (await pipelineBacklog(t.p.db.pool)).unmatchedEvents).toBe(0);
    await advanceTo('2026-11-05T23:00:02Z');
    await advanceTo('2026-11-05T23:30:00Z');
    await ingest([makeEvent(org.id, { title: 'Night critical', severity: 'critical' })]);
    await waitUntilSettled(t.p.db);

    expect(instant(awake.email)).toHaveLength(3);
    const woken = instant(sleeper.email);
    expect(woken).toHaveLength(1);
    expect(woken[0]!.html).toContain('Night critical');
    expect(woken[0]!.html).not.toContain('Night one');

    await advanceTo('2026-11-06T00:00:01Z'); // the hourly digest: the awake member's now, the sleeper's held
    expect(hourly(awake.email)).toHaveLength(1);
    expect(hourly(sleeper.email)).toHaveLength(0);
    await advanceTo('2026-11-06T05:59:59Z'); // 06:59:59 in Berlin
    expect(mailsTo(sleeper.email)).toHaveLength(1);
    await advanceTo('2026-11-06T06:00:01Z'); // 07:00 in Berlin: what was held, as one e-mail per rule
    expect(hourly(sleeper.email)).toHaveLength(1);
    expect(hourly(sleeper.email)[0]!.html).toContain('Night DNS change');
    const after = instant(sleeper.email);
    expect(after).toHaveLength(2);
    for (const title of ['Night one', 'Night two', 'Night three']) expect(after[1]!.html).toContain(title);
    expect(after[1]!.html).not.toContain('Night critical');
    expect(after[1]!.text).toContain('Times are shown in Europe/Berlin.');
    await advanceTo('2026-11-06T07:00:00Z');
    expect(mailsTo(sleeper.email)).toHaveLength(3);
    expect(mailsTo(awake.email)).toHaveLength(4);
  });

  it("validates a member's clock, and another organization's member is a 404", async () => {
    const org = await t.p.createOrg();
    const other = await t.p.createOrg();
    const member = org.members[0]!.team_member_uuid;
    const patch = (orgId: string, id: string, body: unknown) => t.p.admin('PATCH', `/admin/v1/organizations/${orgId}/members/${id}`, body);
    const bad = async (body: unknown) => {
      const response = await patch(org.id, member, body);
      expect(response.statusCode, response.body).toBe(400);
      return response.json();
    };
    expect(await bad({ timezone: 'Mars/Olympus' })).toMatchObject({ code: 10400, parameters: [{ param: 'timezone', details: [expect.stringContaining('not a valid time zone')] }] });
    expect(await bad({ timezone: '+02:00' })).toMatchObject({ code: 10400 });
    expect(await bad({ quiet_hours: { start_hour: 7, end_hour: 7 } })).toMatchObject({ parameters: [{ param: 'quiet_hours' }] });
    expect((await bad({ quiet_hours: { start_hour: 24, end_hour: 7 } })).code).toBe(10400);
    expect((await bad({ quiet_hours: { start_hour: 22 } })).code).toBe(10400);
    expect((await patch(other.id, member, { timezone: 'UTC' })).statusCode).toBe(404);
    expect((await patch(org.id, '00000000-0000-4000-8000-000000000000', { timezone: 'UTC' })).statusCode).toBe(404);

    // Created with a clock; cleared with null (back to the organization's zone, no quiet hours).
    const created = await t.p.admin('POST', `/admin/v1/organizations/${org.id}/members`, {
      email: 'night-owl@example.com', timezone: 'America/New_York', quiet_hours: { start_hour: 23, end_hour: 6 },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ timezone: 'America/New_York', quiet_hours: { start_hour: 23, end_hour: 6 } });
    const cleared = await setClock(t.p, org.id, created.json().team_member_uuid, { timezone: null, quiet_hours: null });
    expect(cleared).toMatchObject({ timezone: null, quiet_hours: null, email: 'night-owl@example.com' });
    const listed = (await t.p.admin('GET', `/admin/v1/organizations/${org.id}/members`)).json() as Array<Record<string, unknown>>;
    expect(listed.find((row) => row.email === 'night-owl@example.com')).toMatchObject({ timezone: null, quiet_hours: null });
  });
});
