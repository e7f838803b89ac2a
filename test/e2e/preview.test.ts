import { describe, expect, it } from 'vitest';
import { makeEvent, usePipeline } from '../support/pipeline';
import { waitUntilSettled } from '../support/wait';

const RULES = '/v1/platform/notification-rules';

describe('POST /v1/platform/notification-rules/preview: what a rule would have sent', () => {
  const t = usePipeline();

  const preview = (key: string, body: unknown, query = '') => t.p.api(key, 'POST', `${RULES}/preview${query}`, body);

  it("replays the organization's stored events through the strategy and frequency, storing and sending nothing", async () => {
    const org = await t.p.createOrg({ memberCount: 2, name: 'Acme' });
    const other = await t.p.createOrg();
    const [a, b] = org.members;
    const events = [
      makeEvent(org.id, { title: 'RDP open on a.acme.example', asset: 'a.acme.example', severity: 'high' }),
      makeEvent(org.id, { title: 'SSH open on b.acme.example', asset: 'b.acme.example', severity: 'critical' }),
      makeEvent(org.id, { title: 'HTTP open on c.acme.example', asset: 'c.acme.example', severity: 'low' }),
      makeEvent(org.id, { scope: 'asset_dns_changed', title: 'DNS', severity: 'high' }),
    ];
    expect((await t.p.ingest({ events })).statusCode).toBe(202);
    // Another organization's matching events count for nothing here.
    expect((await t.p.ingest({ events: [makeEvent(other.id, { severity: 'critical' })] })).statusCode).toBe(202);
    await waitUntilSettled(t.p.db);
    const rulesBefore = (await t.p.api(org.key, 'GET', RULES)).json().result_count;
    const mailsBefore = t.smtp.received.length;

    const body = { scope: 'new_open_port_detected', frequency: 'daily', members: [a!.team_member_uuid, b!.team_member_uuid], strategy: { must: [{ name: 'severity', type: 'gte', value: 'high' }] } };
    const response = await preview(org.key, body);
    expect(response.statusCode, response.body).toBe(200);
    const answer = response.json();
    expect(answer).toMatchObject({
      matched_events: 2,
      emails: 1,
      members: [
        { team_member_uuid: a!.team_member_uuid, email: a!.email, emails: 1 },
        { team_member_uuid: b!.team_member_uuid, email: b!.email, emails: 1 },
      ],
    });
    expect(Date.parse(answer.to) - Date.parse(answer.from)).toBe(30 * 86_400_000);
    expect(answer.sample.subject).toBe('[Acme] Daily digest: 2 events — New open port detected');
    expect(answer.sample.text).toContain('RDP open on a.acme.example');
    expect(answer.sample.text).toContain('SSH open on b.acme.example');
    expect(answer.sample.text).not.toContain('HTTP open on c.acme.example');
    expect(answer.sample.html).toContain('<!doctype html>');

    // Instant, every severity: the three events of the scope arrived together (one request), so the
    // first goes at once and the two others in its burst.
    const instant = (await preview(org.key, { ...body, frequency: 'instant', strategy: null }, '?days=7')).json();
    expect(instant.matched_events).toBe(3);
    expect(instant.emails).toBe(2);
    expect(Date.parse(instant.to) - Date.parse(instant.from)).toBe(7 * 86_400_000);
    // Nothing matched: no e-mail, no sample.
    const none = (await preview(org.key, { ...body, strategy: { must: [{ name: 'asset', type: 'eq', value: 'nowhere.example' }] } })).json();
    expect(none).toMatchObject({ matched_events: 0, emails: 0, sample: null });

    expect((await t.p.api(org.key, 'GET', RULES)).json().result_count).toBe(rulesBefore);
    await waitUntilSettled(t.p.db);
    expect(t.smtp.received.length).toBe(mailsBefore);
  });

  it('validates the body exactly like create, and days from 1 to 90', async () => {
    const org = await t.p.createOrg({ memberCount: 1 });
    const member = org.members[0]!.team_member_uuid;
    const foreign = (await t.p.createOrg()).members[0]!.team_member_uuid;
    for (const body of [
      {},
      { name: 'R', scope: 'nope', members: [member] },
      { name: 'R', scope: 'new_open_port_detected', members: [] },
      { name: 'R', scope: 'new_open_port_detected', members: [member], strategy: { must: [{ name: 'severity', type: 'wildcard', value: 'x' }] } },
      { name: 'R', scope: 'new_open_port_detected', members: [member], frequency: 'weekly', delivery_hour: 25 },
      { name: 'R', scope: 'new_open_port_detected', members: [foreign] },
      { name: '', scope: 'new_open_port_detected', members: [member] },
    ]) {
      const [previewed, created] = [await preview(org.key, body), await t.p.api(org.key, 'POST', RULES, body)];
      expect(previewed.statusCode, JSON.stringify(body)).toBe(400);
      // The same answer, but for the name that create requires and preview does not.
      const expected = created.json();
      if (!('name' in body)) expected.parameters = expected.parameters.filter((issue: { param: string }) => issue.param !== 'name');
      expect(previewed.json(), JSON.stringify(body)).toEqual(expected);
    }
    const ok = { scope: 'new_open_port_detected', members: [member] };
    for (const days of ['0', '91', 'x', '1.5']) {
      const response = await preview(org.key, ok, `?days=${days}`);
      expect(response.statusCode, days).toBe(400);
      expect(response.json().parameters[0].param).toBe('days');
    }
    expect((await preview(org.key, ok, '?days=90')).statusCode).toBe(200);
    expect((await preview(org.key, ok, '?days=1')).statusCode).toBe(200);
  });
});
