import { describe, expect, it } from 'vitest';
import { flushSettled, ingestAccepted, mailsFor, makeEvent, usePipeline } from '../support/pipeline';
import { pause } from '../support/wait';

const SILENCES = '/v1/platform/notification-silences';
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
/** Silences reach every matcher within a second (a Redis announcement). */
const SILENCE_TAKES_EFFECT_MS = 1000;

describe('silences end to end: POST /v1/platform/notification-silences to a real SMTP server', () => {
  const t = usePipeline();

  const mailsTo = (email: string) => mailsFor(t.smtp, email);
  const ingest = (events: unknown[]) => ingestAccepted(t.p, events);
  const flush = (ruleId: string) => flushSettled(t.p, ruleId);
  async function silence(key: string, body: Record<string, unknown>) {
    const response = await t.p.api(key, 'POST', SILENCES, { ends_at: inDays(7), comment: 'maintenance week (ops, CHG-1234)', ...body });
    expect(response.statusCode, response.body).toBe(201);
    await pause(SILENCE_TAKES_EFFECT_MS);
    return response.json() as Record<string, unknown> & { id: string };
  }
  const port = (asset: string, title = `port open on ${asset}`) => ({ scope: 'new_open_port_detected', asset, title });

  it("holds back an asset's events while others go out; after DELETE its new events go out, the held ones never", async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    const rule = await t.p.createRule(org.key, { name: 'Ports', scope: 'new_open_port_detected', frequency: 'daily', members: [member.team_member_uuid] });
    const created = await silence(org.key, { filters: { must: [{ name: 'asset', type: 'eq', value: 'db1.example.com' }] } });
    expect(created).toEqual({
      id: expect.any(String),
      filters: { must: [{ name: 'asset', type: 'eq', value: 'db1.example.com' }], should: [], must_not: [] },
      rule_ids: null,
      starts_at: expect.any(String),
      ends_at: expect.any(String),
      comment: 'maintenance week (ops, CHG-1234)',
      status: 'active',
      silenced_count: 0,
      added_date: expect.any(String),
      last_update_date: expect.any(String),
    });

    await ingest([makeEvent(org.id, port('db1.example.com', 'held 1')), makeEvent(org.id, port('db1.example.com', 'held 2')), makeEvent(org.id, port('web.example.com', 'goes out'))]);
    expect(await flush(rule.id)).toEqual({ matches: 1, deliveries: 1 });
    const [digest] = mailsTo(member.email);
    expect(digest!.html).toContain('goes out');
    expect(digest!.html).not.toContain('held 1');
    expect(digest!.html).not.toContain('held 2');
    const active = (await t.p.api(org.key, 'GET', `${SILENCES}/${created.id}`)).json();
    expect(active).toMatchObject({ status: 'active', silenced_count: 2 });
    // Operators see what was held back.
    const operatorView = (await t.p.admin('GET', `/admin/v1/notification-rules/${rule.id}/deliveries`)).json();
    expect(operatorView).toMatchObject({ pending_matches: 0, silenced_matches: 2 });

    const deleted = await t.p.api(org.key, 'DELETE', `${SILENCES}/${created.id}`);
    expect(deleted.statusCode).toBe(204);
    await pause(SILENCE_TAKES_EFFECT_MS);
    expect((await t.p.api(org.key, 'GET', `${SILENCES}/${created.id}`)).json()).toMatchObject({ status: 'expired', silenced_count: 2 });
    expect((await t.p.api(org.key, 'GET', `${SILENCES}?status__in=expired`)).json()).toMatchObject({ result_count: 1, results: [{ id: created.id }] });

    await ingest([makeEvent(org.id, port('db1.example.com', 'after the silence'))]);
    expect(await flush(rule.id)).toEqual({ matches: 1, deliveries: 1 });
    const mails = mailsTo(member.email);
    expect(mails).toHaveLength(2);
    expect(mails[1]!.html).toContain('after the silence');
    expect(mails[1]!.html).not.toContain('held 1');
  });

  it('applies to the named rules only, and speaks of scope and the other event fields', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    const silenced = await t.p.createRule(org.key, { name: 'Silenced', scope: 'new_open_port_detected', frequency: 'daily', members: [member.team_member_uuid] });
    const other = await t.p.createRule(org.key, { name: 'Other', scope: 'new_open_port_detected', frequency: 'daily', members: [member.team_member_uuid] });
    await silence(org.key, {
      filters: { must: [{ name: 'scope', type: 'eq', value: 'new_open_port_detected' }, { name: 'severity', type: 'lte', value: 'high' }, { name: 'data.port', type: 'eq', value: 3389 }] },
      rule_ids: [silenced.id],
    });
    await ingest([makeEvent(org.id, port('rdp.example.com', 'rdp on rdp'))]);
    expect(await flush(silenced.id)).toEqual({ matches: 0, deliveries: 0 });
    expect(await flush(other.id)).toEqual({ matches: 1, deliveries: 1 });
    expect(mailsTo(member.email)).toHaveLength(1);
    expect(mailsTo(member.email)[0]!.html).toContain('rdp on rdp');
    // A critical event is above the silence's severity bound: it goes out on both rules.
    await ingest([makeEvent(org.id, { ...port('rdp.example.com', 'critical one'), severity: 'critical' })]);
    expect(await flush(silenced.id)).toEqual({ matches: 1, deliveries: 1 });
  });

  it("keeps organizations apart: another organization's silence is a 404, its rules a 400", async () => {
    const a = await t.p.createOrg();
    const b = await t.p.createOrg();
    const bRule = await t.p.createRule(b.key, { name: 'B', scope: 'new_open_port_detected', members: [b.members[0]!.team_member_uuid] });
    const mine = await silence(a.key, { filters: { must: [{ name: 'asset', type: 'eq', value: 'x.example.com' }] } });
    for (const method of ['GET', 'DELETE'] as const) {
      const response = await t.p.api(b.key, method, `${SILENCES}/${mine.id}`);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ code: 10404, details: 'Notification silence not found.', parameters: [], solution: expect.any(String) });
    }
    expect((await t.p.api(b.key, 'GET', SILENCES)).json()).toMatchObject({ result_count: 0, results: [] });
    const foreign = await t.p.api(a.key, 'POST', SILENCES, { filters: { must: [{ name: 'asset', type: 'eq', value: 'x' }] }, rule_ids: [bRule.id], ends_at: inDays(1), comment: 'c' });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().parameters).toEqual([{ param: 'rule_ids', details: [`Invalid pk "${bRule.id}" - object does not exist.`] }]);
    // Still active for its own organization.
    expect((await t.p.api(a.key, 'GET', `${SILENCES}/${mine.id}`)).json()).toMatchObject({ status: 'active' });
  });

  it('refuses bad bodies with one DRF message per field, storing nothing', async () => {
    const org = await t.p.createOrg();
    const post = (body: unknown) => t.p.api(org.key, 'POST', SILENCES, body);
    const filters = { must: [{ name: 'asset', type: 'eq', value: 'a.example.com' }] };
    const cases: Array<[unknown, Array<{ param: string; details: string[] }>]> = [
      [{}, [
        { param: 'filters', details: ['This field is required.'] },
        { param: 'ends_at', details: ['This field is required.'] },
        { param: 'comment', details: ['This field is required.'] },
      ]],
      [{ filters: {}, ends_at: inDays(1), comment: 'c' }, [{ param: 'filters', details: ['Name at least one condition: a silence of everything would hide every alert.'] }]],
      [{ filters: null, ends_at: inDays(1), comment: 'c' }, [{ param: 'filters', details: ['This field may not be null.'] }]],
      [{ filters: { must: [{ name: 'colour', type: 'eq', value: 'x' }] }, ends_at: inDays(1), comment: 'c' }, [
        { param: 'filters.must[0].name', details: [expect.stringContaining('"colour" is not a valid field. Use one of: scope, asset,')] },
      ]],
      [{ filters, ends_at: inDays(1), starts_at: inDays(2), comment: 'c' }, [{ param: 'ends_at', details: ['Must be after starts_at.'] }]],
      [{ filters, ends_at: inDays(-1), starts_at: inDays(-2), comment: 'c' }, [{ param: 'ends_at', details: ['Must be in the future.'] }]],
      [{ filters, ends_at: inDays(367), comment: 'c' }, [{ param: 'ends_at', details: ['Must be at most one year ahead.'] }]],
      [{ filters, ends_at: 'next tuesday', comment: 'c' }, [{ param: 'ends_at', details: [expect.stringContaining('Datetime has wrong format.')] }]],
      [{ filters, ends_at: inDays(1), comment: '' }, [{ param: 'comment', details: [expect.stringContaining('')] }]],
      [{ filters, ends_at: inDays(1), comment: 'x'.repeat(1001) }, [{ param: 'comment', details: ['Ensure this field has no more than 1000 characters.'] }]],
      [{ filters, ends_at: inDays(1), comment: 'c', rule_ids: ['nope'] }, [{ param: 'rule_ids', details: [expect.stringContaining('valid UUID')] }]],
      [{ filters, ends_at: inDays(1), comment: 'c', rule_ids: [] }, [{ param: 'rule_ids', details: [expect.any(String)] }]],
    ];
    for (const [body, parameters] of cases) {
      const response = await post(body);
      expect(response.statusCode, JSON.stringify(body).slice(0, 200)).toBe(400);
      const answer = response.json();
      expect(answer).toEqual({ code: 10400, details: null, parameters: expect.any(Array), solution: expect.any(String) });
      expect(answer.parameters, JSON.stringify(body).slice(0, 200)).toEqual(expect.arrayContaining(parameters));
      expect(answer.parameters).toHaveLength(parameters.length);
    }
    expect((await t.p.api(org.key, 'GET', SILENCES)).json()).toMatchObject({ result_count: 0 });
    const badList = await t.p.api(org.key, 'GET', `${SILENCES}?status__in=sleeping&page_size=0`);
    expect(badList.statusCode).toBe(400);
    expect(badList.json().parameters).toEqual(expect.arrayContaining([
      { param: 'status__in', details: ['"sleeping" is not a valid choice.'] },
      { param: 'page_size', details: ['Ensure this value is greater than or equal to 1.'] },
    ]));
  });

  it('lists with the envelope, by status and page', async () => {
    const org = await t.p.createOrg();
    const filters = { must: [{ name: 'tags', type: 'contains_any', value: ['lab'] }] };
    const post = (extra: Record<string, unknown>) => t.p.api(org.key, 'POST', SILENCES, { filters, ends_at: inDays(3), comment: 'lab', ...extra });
    expect((await post({})).statusCode).toBe(201);
    expect((await post({ starts_at: inDays(1) })).statusCode).toBe(201);
    expect((await post({ starts_at: inDays(2) })).statusCode).toBe(201);
    const page = (await t.p.api(org.key, 'GET', `${SILENCES}?page_size=2&page=2`)).json();
    expect(page).toMatchObject({ page: 2, page_size: 2, result_count: 3 });
    expect(page.results).toHaveLength(1);
    expect((await t.p.api(org.key, 'GET', `${SILENCES}?status__in=pending`)).json()).toMatchObject({ result_count: 2 });
    expect((await t.p.api(org.key, 'GET', `${SILENCES}?status__in=active,expired`)).json()).toMatchObject({ result_count: 1 });
  });
});
