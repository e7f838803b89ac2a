import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestOrg } from '../support/app';
import { pause } from '../support/wait';

const RULES = '/v1/platform/notification-rules';
const DOCS = 'https://docs.example.test/notification-rules';
const UNKNOWN_ID = '9b2f6a57-1f7e-4c7b-8d55-3f0f3c1b6a11';
const IMMUTABLE = 'This field cannot be changed.';

type Rule = Record<string, unknown> & { id: string; added_date: string; last_update_date: string };

describe('PUT /v1/platform/notification-rules/{rule_id} (update)', () => {
  let t: TestApp;
  let org: TestOrg;

  const member = (i = 0) => org.members[i]!.team_member_uuid;
  const put = (id: string, body: unknown) => t.api(org.key, 'PUT', `${RULES}/${id}`, body);
  const get = async (id: string): Promise<Rule> => (await t.api(org.key, 'GET', `${RULES}/${id}`)).json();
  const update = (extra: Record<string, unknown> = {}) => ({ name: 'Updated', members: [member()], enabled: true, ...extra });
  const memberIds = (rule: Rule) => (rule.members as Array<{ team_member_uuid: string }>).map((m) => m.team_member_uuid).sort();

  async function createRule(extra: Record<string, unknown> = {}): Promise<Rule> {
    const response = await t.api(org.key, 'POST', RULES, { name: 'Original', scope: 'new_open_port_detected', members: [member()], ...extra });
    expect(response.statusCode, response.body).toBe(201);
    return response.json();
  }

  /** Waits long enough that a new timestamp (millisecond precision) is certainly later. */
  const tick = () => pause(15);

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrg({ memberCount: 3 });
  });
  afterAll(async () => t.close());

  describe('validation comes first', () => {
    it('answers {} for an id that does not exist with exactly name and members required (spec rule 3)', async () => {
      const response = await put(UNKNOWN_ID, {});
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.json()).toEqual({
        code: 10400,
        details: null,
        parameters: [
          { param: 'name', details: ['This field is required.'] },
          { param: 'members', details: ['This field is required.'] },
        ],
        solution: DOCS,
      });
    });

    it('answers {} for an existing rule the same way, and leaves the rule as it was', async () => {
      const rule = await createRule();
      const response = await put(rule.id, {});
      expect(response.statusCode).toBe(400);
      expect(response.json().parameters.map((p: { param: string }) => p.param)).toEqual(['name', 'members']);
      expect(await get(rule.id)).toEqual(rule);
    });

    it('asks for enabled once name and members are present', async () => {
      const response = await put(UNKNOWN_ID, { name: 'x', members: [member()] });
      expect(response.statusCode).toBe(400);
      expect(response.json().parameters).toEqual([{ param: 'enabled', details: ['This field is required.'] }]);
    });

    it('validates the body before looking the id up, even for a malformed id', async () => {
      const response = await put('not-an-id', { name: '', members: [], enabled: 'no' });
      expect(response.statusCode).toBe(400);
      const params = response.json().parameters.map((p: { param: string }) => p.param).sort();
      expect(params).toEqual(['enabled', 'members', 'name']);
    });

    it.each([
      ['scope', { scope: 'new_issue_detected' }],
      ['scope', { scope: 'new_open_port_detected' }],
      ['scope', { scope: null }],
      ['strategy', { strategy: { must: [{ name: 'severity', type: 'eq', value: 'high' }] } }],
      ['strategy', { strategy: null }],
    ])('answers %s in the body (%j) with "This field cannot be changed."', async (param, extra) => {
      const rule = await createRule({ strategy: { must: [{ name: 'asset', type: 'eq', value: 'a.example.com' }] } });
      const response = await put(rule.id, update(extra));
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toEqual({ code: 10400, details: null, parameters: [{ param, details: [IMMUTABLE] }], solution: DOCS });
      expect(await get(rule.id)).toEqual(rule);
    });

    it('reports scope and strategy together with other problems', async () => {
      const rule = await createRule();
      const response = await put(rule.id, { name: 'n'.repeat(256), members: [member()], enabled: true, scope: 'x', strategy: {}, delivery_hour: 24 });
      expect(response.statusCode).toBe(400);
      const byParam = Object.fromEntries(response.json().parameters.map((p: { param: string; details: string[] }) => [p.param, p.details]));
      expect(byParam).toEqual({
        name: ['Ensure this field has no more than 255 characters.'],
        scope: [IMMUTABLE],
        strategy: [IMMUTABLE],
        delivery_hour: ['Ensure this value is less than or equal to 23.'],
      });
    });

    it.each([
      ['name', { name: '   ' }, 'This field may not be blank.'],
      ['name', { name: 'n'.repeat(256) }, 'Ensure this field has no more than 255 characters.'],
      ['members', { members: [] }, 'This list may not be empty.'],
      ['members', { members: ['nope'] }, 'Must be a valid UUID.'],
      ['enabled', { enabled: 'yes' }, 'Must be a valid boolean.'],
      ['delivery_hour', { delivery_hour: -1 }, 'Ensure this value is greater than or equal to 0.'],
      ['delivery_hour', { delivery_hour: '9' }, 'A valid integer is required.'],
      ['delivery_day_of_week', { delivery_day_of_week: 7 }, 'Ensure this value is less than or equal to 6.'],
      ['frequency', { frequency: 'yearly' }, '"yearly" is not a valid choice.'],
    ])('rejects a bad %s (%j) and changes nothing', async (param, extra, message) => {
      const rule = await createRule({ frequency: 'weekly' });
      const response = await put(rule.id, update(extra));
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().parameters).toEqual([{ param, details: [message] }]);
      expect(await get(rule.id)).toEqual(rule);
    });

    it("rejects an unknown or another organization's member on members and changes nothing", async () => {
      const other = await t.createOrg({ memberCount: 1 });
      const rule = await createRule();
      for (const foreign of ['00000000-0000-4000-8000-000000000000', other.members[0]!.team_member_uuid]) {
        const response = await put(rule.id, update({ members: [member(1), foreign] }));
        expect(response.statusCode, response.body).toBe(400);
        expect(response.json().parameters.map((p: { param: string }) => p.param)).toEqual(['members']);
        expect(response.json().parameters[0].details.join(' ')).toContain(foreign);
      }
      expect(await get(rule.id)).toEqual(rule);
    });
  });

  describe('ids that name no rule', () => {
    it('answers a valid body for an unknown id with 404 code 10404', async () => {
      const before = (await t.deps.db.pool.query('SELECT count(*) AS n FROM notification_rules')).rows[0];
      const response = await put(UNKNOWN_ID, update());
      expect(response.statusCode).toBe(404);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.json()).toEqual({ code: 10404, details: expect.any(String), parameters: [], solution: DOCS });
      // A PUT never creates a rule.
      expect((await t.deps.db.pool.query('SELECT count(*) AS n FROM notification_rules')).rows[0]).toEqual(before);
    });

    it.each(['not-a-uuid', '123', 'x'.repeat(100), UNKNOWN_ID.toUpperCase().replace('9B', 'AB'), "1' OR '1'='1", '%20', 'a.b'])(
      'answers a valid body for the malformed or unknown id %j with 404 code 10404',
      async (id) => {
        const response = await put(encodeURIComponent(id), update());
        expect(response.statusCode, response.body).toBe(404);
        expect(response.json()).toMatchObject({ code: 10404, parameters: [], solution: DOCS });
      },
    );

    // BUG (apps/api/src/app.ts, not fixed here): Fastify answers an id longer than its router's
    // maxParamLength (100) with its own 414 body and an invalid percent-escape with its own 400
    // FST_ERR_BAD_URL body, before any hook: no service-request-id, no apikey check, not the
    // application error body. Decisions §3: an id that names no rule, whatever its form, is a 404.
    // Fix in app.ts with Fastify's `frameworkErrors` option. Flip `it.fails` to `it` once fixed.
    it.each(['x'.repeat(101), '%zz'])('answers a valid body for the id %j with 404 code 10404 (Fastify router bug)', async (id) => {
      const response = await put(id, update());
      expect(response.statusCode, response.body).toBe(404);
      expect(response.json()).toMatchObject({ code: 10404, parameters: [], solution: DOCS });
      expect(response.headers['service-request-id']).toBeDefined();
    });

    it('answers 404 for a rule that was deleted', async () => {
      const rule = await createRule();
      expect((await t.api(org.key, 'DELETE', `${RULES}/${rule.id}`)).statusCode).toBe(204);
      const response = await put(rule.id, update());
      expect(response.statusCode).toBe(404);
      expect(response.json().code).toBe(10404);
    });
  });

  describe('successful updates', () => {
    it('answers 200 with the full resource; scope, strategy, id and added_date stay', async () => {
      const strategy = { must: [{ name: 'severity', type: 'gte', value: 'high' }], should: [], must_not: [] };
      const rule = await createRule({ strategy, frequency: 'daily', delivery_hour: 6 });
      await tick();
      const response = await put(rule.id, update({ name: 'Renamed', members: [member(1), member(2)], enabled: false }));
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const updated: Rule = response.json();
      expect(Object.keys(updated).sort()).toEqual(
        ['id', 'name', 'scope', 'strategy', 'frequency', 'delivery_hour', 'delivery_day_of_week', 'members', 'enabled', 'renotify_after_hours', 'added_date', 'last_update_date'].sort(),
      );
      expect(updated).toMatchObject({
        id: rule.id,
        name: 'Renamed',
        scope: 'new_open_port_detected',
        strategy,
        frequency: 'daily',
        delivery_hour: 6,
        delivery_day_of_week: null,
        enabled: false,
        added_date: rule.added_date,
      });
      expect(memberIds(updated)).toEqual([member(1), member(2)].sort());
      for (const m of updated.members as Array<Record<string, string>>) {
        expect(m.email).toBe(org.members.find((o) => o.team_member_uuid === m.team_member_uuid)!.email);
      }
      expect(Date.parse(updated.last_update_date)).toBeGreaterThan(Date.parse(rule.last_update_date));
      expect(await get(rule.id)).toEqual(updated);
    });

    it('toggles enabled both ways; last_update_date moves each time and added_date never', async () => {
      const rule = await createRule();
      expect(rule.enabled).toBe(true);
      let previous = rule;
      for (const enabled of [false, true, false]) {
        await tick();
        const response = await put(rule.id, update({ name: 'Original', enabled }));
        expect(response.statusCode, response.body).toBe(200);
        const updated: Rule = response.json();
        expect(updated.enabled).toBe(enabled);
        expect(updated.added_date).toBe(rule.added_date);
        expect(Date.parse(updated.last_update_date)).toBeGreaterThan(Date.parse(previous.last_update_date));
        expect((await get(rule.id)).enabled).toBe(enabled);
        previous = updated;
      }
      // The list sees the same state.
      const listed = (await t.api(org.key, 'GET', `${RULES}?enabled=false`)).json().results.map((r: Rule) => r.id);
      expect(listed).toContain(rule.id);
    });

    it('keeps omitted delivery fields', async () => {
      const rule = await createRule({ frequency: 'weekly', delivery_hour: 17, delivery_day_of_week: 5 });
      const response = await put(rule.id, update());
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({ frequency: 'weekly', delivery_hour: 17, delivery_day_of_week: 5 });
    });

    it('changes only the delivery field that is sent', async () => {
      const rule = await createRule({ frequency: 'weekly', delivery_hour: 17, delivery_day_of_week: 5 });
      let response = await put(rule.id, update({ delivery_hour: 0 }));
      expect(response.json()).toMatchObject({ frequency: 'weekly', delivery_hour: 0, delivery_day_of_week: 5 });
      response = await put(rule.id, update({ delivery_day_of_week: 6 }));
      expect(response.json()).toMatchObject({ frequency: 'weekly', delivery_hour: 0, delivery_day_of_week: 6 });
      response = await put(rule.id, update({ delivery_hour: 23, delivery_day_of_week: 0 }));
      expect(response.json()).toMatchObject({ frequency: 'weekly', delivery_hour: 23, delivery_day_of_week: 0 });
      expect(await get(rule.id)).toMatchObject({ frequency: 'weekly', delivery_hour: 23, delivery_day_of_week: 0 });
    });

    it('applies the defaults when the frequency changes', async () => {
      const rule = await createRule();
      expect(rule).toMatchObject({ frequency: 'instant', delivery_hour: null, delivery_day_of_week: null });
      const steps: Array<[Record<string, unknown>, Record<string, unknown>]> = [
        [{ frequency: 'daily' }, { frequency: 'daily', delivery_hour: 9, delivery_day_of_week: null }],
        [{ frequency: 'weekly' }, { frequency: 'weekly', delivery_hour: 9, delivery_day_of_week: 0 }],
        [{ frequency: 'hourly' }, { frequency: 'hourly', delivery_hour: null, delivery_day_of_week: null }],
        [{ frequency: 'monthly', delivery_hour: 4 }, { frequency: 'monthly', delivery_hour: 4, delivery_day_of_week: null }],
        [{ frequency: 'instant', delivery_hour: 4, delivery_day_of_week: 2 }, { frequency: 'instant', delivery_hour: null, delivery_day_of_week: null }],
        [{ frequency: 'weekly', delivery_day_of_week: 3 }, { frequency: 'weekly', delivery_hour: 9, delivery_day_of_week: 3 }],
      ];
      for (const [change, expected] of steps) {
        const response = await put(rule.id, update(change));
        expect(response.statusCode, `${JSON.stringify(change)}: ${response.body}`).toBe(200);
        expect(response.json(), JSON.stringify(change)).toMatchObject(expected);
        expect(await get(rule.id)).toMatchObject(expected);
      }
    });

    it('replaces the members (not a merge) and collapses duplicates', async () => {
      const rule = await createRule({ members: [member(0), member(1)] });
      let response = await put(rule.id, update({ members: [member(2)] }));
      expect(response.statusCode, response.body).toBe(200);
      expect(memberIds(response.json())).toEqual([member(2)]);
      response = await put(rule.id, update({ members: [member(0), member(1), member(0), member(1).toUpperCase()] }));
      expect(memberIds(response.json())).toEqual([member(0), member(1)].sort());
      expect(memberIds(await get(rule.id))).toEqual([member(0), member(1)].sort());
      const { rows } = await t.deps.db.pool.query('SELECT team_member_id FROM notification_rule_members WHERE rule_id = $1', [rule.id]);
      expect(rows).toHaveLength(2);
    });

    it('trims the name and leaves other rules alone', async () => {
      const [a, b] = [await createRule({ name: 'A' }), await createRule({ name: 'B' })];
      const response = await put(a.id, update({ name: '  Trimmed  ' }));
      expect(response.json().name).toBe('Trimmed');
      expect(await get(b.id)).toEqual(b);
    });
  });
});
