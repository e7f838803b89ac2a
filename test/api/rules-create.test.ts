import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestOrg } from '../support/app';

const RULES = '/v1/platform/notification-rules';
const DOCS = 'https://docs.example.test/notification-rules';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const MSG = {
  required: 'This field is required.',
  blank: 'This field may not be blank.',
  maxLength: 'Ensure this field has no more than 255 characters.',
  min: (n: number) => `Ensure this value is greater than or equal to ${n}.`,
  max: (n: number) => `Ensure this value is less than or equal to ${n}.`,
  boolean: 'Must be a valid boolean.',
  integer: 'A valid integer is required.',
  choice: (v: string) => `"${v}" is not a valid choice.`,
  emptyList: 'This list may not be empty.',
  uuid: 'Must be a valid UUID.',
};

interface Issue {
  param: string;
  details: string[];
}

describe('POST /v1/platform/notification-rules (create)', () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;
  let rowsBefore: number;
  let linksBefore: number;

  const member = (i = 0) => org.members[i]!.team_member_uuid;
  const valid = (extra: Record<string, unknown> = {}) => ({ name: 'Rule', scope: 'new_open_port_detected', members: [member()], ...extra });
  const create = (body: unknown) => t.api(org.key, 'POST', RULES, body);
  const countRules = async () => Number((await t.deps.db.pool.query<{ n: string }>('SELECT count(*) AS n FROM notification_rules')).rows[0]!.n);
  const countLinks = async () => Number((await t.deps.db.pool.query<{ n: string }>('SELECT count(*) AS n FROM notification_rule_members')).rows[0]!.n);

  /** Asserts a 10400 answer whose parameters are exactly `parameters` (in any order). */
  function expectValidation(response: Awaited<ReturnType<typeof create>>, parameters: Issue[]) {
    expect(response.statusCode, response.body).toBe(400);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = response.json();
    expect(body).toEqual({ code: 10400, details: null, parameters: expect.any(Array), solution: DOCS });
    const sort = (issues: Issue[]) => [...issues].sort((a, b) => a.param.localeCompare(b.param));
    expect(sort(body.parameters)).toEqual(sort(parameters));
  }

  /** Asserts a 400 with exactly one entry, on `param`, whose details include `detail` when given. */
  function expectRejected(response: Awaited<ReturnType<typeof create>>, param: string, detail?: string) {
    expect(response.statusCode, response.body).toBe(400);
    const body = response.json();
    expect(body.code).toBe(10400);
    expect(body.solution).toBe(DOCS);
    expect(body.parameters.map((p: Issue) => p.param)).toEqual([param]);
    if (detail !== undefined) expect(body.parameters[0].details).toEqual([detail]);
  }

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrg({ memberCount: 3 });
    other = await t.createOrg({ memberCount: 1 });
  });
  afterAll(async () => t.close());

  describe('rejected requests store nothing', () => {
    beforeEach(async () => {
      rowsBefore = await countRules();
      linksBefore = await countLinks();
    });
    // Every 4xx test in this block checks the row counts afterwards.
    const unchanged = async () => {
      expect(await countRules()).toBe(rowsBefore);
      expect(await countLinks()).toBe(linksBefore);
    };

    it('answers {} with exactly the spec body: name and scope required', async () => {
      const response = await create({});
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.json()).toEqual({
        code: 10400,
        details: null,
        parameters: [
          { param: 'name', details: ['This field is required.'] },
          { param: 'scope', details: ['This field is required.'] },
        ],
        solution: DOCS,
      });
      await unchanged();
    });

    it('answers an empty body like {}', async () => {
      const response = await t.app.inject({ method: 'POST', url: RULES, headers: { apikey: org.key, 'content-type': 'application/json' }, payload: '' });
      expectValidation(response, [
        { param: 'name', details: [MSG.required] },
        { param: 'scope', details: [MSG.required] },
      ]);
      await unchanged();
    });

    it('with name and scope present, only members is required', async () => {
      expectValidation(await create({ name: 'x', scope: 'new_issue_detected' }), [{ param: 'members', details: [MSG.required] }]);
      await unchanged();
    });

    it.each([
      ['empty', ''],
      ['blank', '   '],
      ['tab and newline only', '\t\n'],
    ])('rejects a %s name with "This field may not be blank."', async (_kind, name) => {
      expectRejected(await create(valid({ name })), 'name', MSG.blank);
      await unchanged();
    });

    it('rejects a name of 256 characters', async () => {
      expectRejected(await create(valid({ name: 'n'.repeat(256) })), 'name', MSG.maxLength);
      await unchanged();
    });

    it.each([
      [-1, MSG.min(0)],
      [24, MSG.max(23)],
    ])('rejects delivery_hour %s', async (hour, message) => {
      expectRejected(await create(valid({ frequency: 'daily', delivery_hour: hour })), 'delivery_hour', message);
      await unchanged();
    });

    it.each([
      [-1, MSG.min(0)],
      [7, MSG.max(6)],
    ])('rejects delivery_day_of_week %s', async (day, message) => {
      expectRejected(await create(valid({ frequency: 'weekly', delivery_day_of_week: day })), 'delivery_day_of_week', message);
      await unchanged();
    });

    it('rejects a non-integer delivery_hour', async () => {
      expectRejected(await create(valid({ frequency: 'daily', delivery_hour: 9.5 })), 'delivery_hour', MSG.integer);
      await unchanged();
    });

    it('rejects an empty members list', async () => {
      expectRejected(await create(valid({ members: [] })), 'members', MSG.emptyList);
      await unchanged();
    });

    it('rejects a member that is not a UUID', async () => {
      expectRejected(await create(valid({ members: [member(), 'not-a-uuid'] })), 'members', MSG.uuid);
      await unchanged();
    });

    it('rejects an unknown member UUID on members', async () => {
      const unknown = '00000000-0000-4000-8000-000000000000';
      const response = await create(valid({ members: [member(), unknown] }));
      expectRejected(response, 'members');
      expect(response.json().parameters[0].details.join(' ')).toContain(unknown);
      await unchanged();
    });

    it("rejects another organization's member on members", async () => {
      const foreign = other.members[0]!.team_member_uuid;
      const response = await create(valid({ members: [foreign] }));
      expectRejected(response, 'members');
      expect(response.json().parameters[0].details.join(' ')).toContain(foreign);
      await unchanged();
    });

    it.each([
      ['enabled', { enabled: 'yes' }, MSG.boolean],
      ['enabled', { enabled: 1 }, MSG.boolean],
      ['delivery_hour', { frequency: 'daily', delivery_hour: '5' }, MSG.integer],
      ['delivery_day_of_week', { frequency: 'weekly', delivery_day_of_week: '1' }, MSG.integer],
      ['scope', { scope: 'nope' }, MSG.choice('nope')],
      ['frequency', { frequency: 'yearly' }, MSG.choice('yearly')],
      ['frequency', { frequency: 'Daily' }, MSG.choice('Daily')],
      ['name', { name: 42 }, undefined],
      ['members', { members: '6f1c0f9e-3c1a-4d39-9a57-0d5a4d1e2f33' }, 'Expected a list of items but got type "str".'],
    ])('rejects a wrong type or value on %s (%j)', async (param, extra, message) => {
      expectRejected(await create(valid(extra)), param, message);
      await unchanged();
    });

    it('reports several bad fields together in one 400', async () => {
      const response = await create({
        name: 'n'.repeat(256),
        scope: 'nope',
        frequency: 'weekly',
        delivery_hour: 24,
        delivery_day_of_week: -1,
        members: [],
        enabled: 'yes',
      });
      expectValidation(response, [
        { param: 'name', details: [MSG.maxLength] },
        { param: 'scope', details: [MSG.choice('nope')] },
        { param: 'delivery_hour', details: [MSG.max(23)] },
        { param: 'delivery_day_of_week', details: [MSG.min(0)] },
        { param: 'members', details: [MSG.emptyList] },
        { param: 'enabled', details: [MSG.boolean] },
      ]);
      await unchanged();
    });

    it.each([
      ['an unknown field', { must: [{ name: 'colour', type: 'eq', value: 'red' }] }, 'strategy.must[0].name'],
      ['an unknown operator', { must: [{ name: 'severity', type: 'near', value: 'high' }] }, 'strategy.must[0].type'],
      ['an operator the field does not take', { should: [{ name: 'asset', type: 'gte', value: 'a' }] }, 'strategy.should[0].type'],
      ['a value of the wrong type', { must_not: [{ name: 'tags', type: 'contains_any', value: 'test' }] }, 'strategy.must_not[0].value'],
      ['an unknown severity', { must: [{ name: 'severity', type: 'gte', value: 'urgent' }] }, 'strategy.must[0].value'],
      ['a missing value', { must: [{ name: 'asset', type: 'eq' }] }, 'strategy.must[0].value'],
      ['an unknown clause', { any: [] }, 'strategy.any'],
      ['a clause that is not a list', { must: { name: 'asset', type: 'eq', value: 'x' } }, 'strategy.must'],
      ['a strategy that is not an object', 'severity=high', 'strategy'],
    ])('rejects a strategy with %s, naming the condition', async (_kind, strategy, param) => {
      const response = await create(valid({ strategy }));
      expectRejected(response, param);
      expect(response.json().parameters[0].details).toHaveLength(1);
      await unchanged();
    });

    it('names the offending condition by its index', async () => {
      const strategy = {
        must: [
          { name: 'severity', type: 'in', value: ['high'] },
          { name: 'asset', type: 'wildcard', value: '*.example.com' },
          { name: 'severity', type: 'bogus', value: 'high' },
        ],
      };
      expectRejected(await create(valid({ strategy })), 'strategy.must[2].type', MSG.choice('bogus'));
      await unchanged();
    });

    it('refuses a strategy over the cost budget on strategy (150 wildcards of 1,024 characters on tags)', async () => {
      const wildcard = { name: 'tags', type: 'wildcard', value: `*${'a*'.repeat(511)}b` };
      const fifty = Array.from({ length: 50 }, () => wildcard);
      const response = await create(valid({ strategy: { must: fifty, should: fifty, must_not: fifty } }));
      expectRejected(response, 'strategy');
      expect(response.json().parameters[0].details[0]).toMatch(/^Ensure this strategy costs no more than 200000 to evaluate \(it costs \d+\)/);
      // Fewer, but still many wildcards on tags.
      const twenty = Array.from({ length: 20 }, () => ({ name: 'tags', type: 'wildcard', value: 'prod-*' }));
      expectRejected(await create(valid({ strategy: { should: twenty } })), 'strategy');
      await unchanged();
    });

    it('answers malformed JSON with a 400 on body', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: RULES,
        headers: { apikey: org.key, 'content-type': 'application/json' },
        payload: '{"name": "x", "scope": ',
      });
      expectRejected(response, 'body');
      await unchanged();
    });

    it.each([
      ['an array', [{ name: 'x', scope: 'new_issue_detected', members: [] }]],
      ['a string', 'rule'],
      ['a number', 42],
      ['null', null],
    ])('answers a JSON body that is %s with a 400 on body', async (_kind, payload) => {
      const response = await t.app.inject({
        method: 'POST',
        url: RULES,
        headers: { apikey: org.key, 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
      expectRejected(response, 'body');
      await unchanged();
    });

    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])('answers Content-Type %s with 415 code 10415', async (type) => {
      const response = await t.app.inject({
        method: 'POST',
        url: RULES,
        headers: { apikey: org.key, 'content-type': type },
        payload: JSON.stringify(valid()),
      });
      expect(response.statusCode, response.body).toBe(415);
      expect(response.json()).toEqual({ code: 10415, details: expect.any(String), parameters: [], solution: DOCS });
      await unchanged();
    });

    it('accepts application/json with a charset parameter or in upper case', async () => {
      for (const type of ['application/json; charset=utf-8', 'Application/JSON']) {
        const response = await t.app.inject({ method: 'POST', url: RULES, headers: { apikey: org.key, 'content-type': type }, payload: JSON.stringify(valid()) });
        expect(response.statusCode, `${type}: ${response.body}`).toBe(201);
        rowsBefore++;
        linksBefore++;
      }
      await unchanged();
    });

    it('answers a body over 1 MiB with 413 code 10413', async () => {
      const payload = JSON.stringify(valid({ name: 'x', padding: 'p'.repeat(1024 * 1024) }));
      expect(Buffer.byteLength(payload)).toBeGreaterThan(1024 * 1024);
      const response = await t.app.inject({
        method: 'POST',
        url: RULES,
        headers: { apikey: org.key, 'content-type': 'application/json' },
        payload,
      });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual({ code: 10413, details: expect.any(String), parameters: [], solution: DOCS });
      await unchanged();
    });

    it.each([
      ['name', () => valid({ name: 'bad\u0000name' })],
      ['a strategy value', () => valid({ strategy: { must: [{ name: 'asset', type: 'eq', value: 'a\u0000b' }] } })],
      ['an ignored extra field', () => valid({ note: '\u0000' })],
    ])('answers a NUL character in %s with a 400', async (_where, body) => {
      const response = await create(body());
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toMatchObject({ code: 10400, solution: DOCS });
      expect(response.json().parameters).toHaveLength(1);
      await unchanged();
    });
  });

  describe('accepted requests', () => {
    it('answers 201 with every resource field, members resolved and ISO dates', async () => {
      const before = Date.now();
      const strategy = {
        must: [{ name: 'severity', type: 'in', value: ['high', 'critical'] }],
        should: [{ name: 'asset', type: 'wildcard', value: '*.example.com' }],
        must_not: [{ name: 'tags', type: 'contains_any', value: ['test'] }],
      };
      const response = await create({
        name: 'Open ports on production',
        scope: 'new_open_port_detected',
        strategy,
        frequency: 'weekly',
        delivery_hour: 7,
        delivery_day_of_week: 4,
        members: [member(1), member(0)],
        enabled: false,
      });
      expect(response.statusCode, response.body).toBe(201);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const rule = response.json();
      expect(Object.keys(rule).sort()).toEqual(
        ['id', 'name', 'scope', 'strategy', 'frequency', 'delivery_hour', 'delivery_day_of_week', 'members', 'enabled', 'renotify_after_hours', 'added_date', 'last_update_date'].sort(),
      );
      expect(rule).toMatchObject({
        name: 'Open ports on production',
        scope: 'new_open_port_detected',
        strategy,
        frequency: 'weekly',
        delivery_hour: 7,
        delivery_day_of_week: 4,
        enabled: false,
      });
      expect(rule.id).toEqual(expect.any(String));
      expect(rule.id.length).toBeGreaterThan(0);
      const members = [...rule.members].sort((a: { email: string }, b: { email: string }) => a.email.localeCompare(b.email));
      expect(members).toEqual([{ ...org.members[0], subscribed: true }, { ...org.members[1], subscribed: true }]);
      for (const m of rule.members) expect(Object.keys(m).sort()).toEqual(['email', 'subscribed', 'team_member_uuid']);
      for (const field of ['added_date', 'last_update_date']) {
        expect(rule[field]).toMatch(ISO);
        const time = Date.parse(rule[field]);
        expect(time).toBeGreaterThanOrEqual(before - 1000);
        expect(time).toBeLessThanOrEqual(Date.now() + 1000);
      }
      // The rule is really stored: reading it back gives the same resource.
      const read = await t.api(org.key, 'GET', `${RULES}/${rule.id}`);
      expect(read.statusCode).toBe(200);
      expect(read.json()).toEqual(rule);
    });

    it('accepts large realistic strategies within the cost budget', async () => {
      const strategies = [
        // 150 conditions on the asset name.
        { must: Array.from({ length: 50 }, (_, i) => ({ name: 'asset', type: 'eq', value: `host${i}.example.com` })), should: Array.from({ length: 50 }, (_, i) => ({ name: 'asset', type: 'wildcard', value: `*.zone${i}.example.com` })), must_not: Array.from({ length: 50 }, (_, i) => ({ name: 'asset_type', type: 'eq', value: `type${i}` })) },
        // Tags, severities and data fields together, with lists of 100 values.
        {
          must: [{ name: 'severity', type: 'gte', value: 'medium' }, { name: 'tags', type: 'contains_any', value: Array.from({ length: 100 }, (_, i) => `team-${i}`) }, { name: 'data.port', type: 'in', value: [22, 3389, 5900] }],
          should: [{ name: 'tags', type: 'wildcard', value: 'prod-*' }, { name: 'tags', type: 'wildcard', value: '*-critical' }, { name: 'data.product', type: 'startswith', value: 'OpenSSH' }],
          must_not: [{ name: 'tags', type: 'contains_all', value: ['test', 'sandbox'] }, { name: 'data.banner', type: 'wildcard', value: '*honeypot*' }],
        },
      ];
      for (const strategy of strategies) expect((await create(valid({ strategy }))).statusCode).toBe(201);
    });

    it('applies the defaults: instant, enabled, no strategy, no delivery slot', async () => {
      const response = await create(valid());
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json()).toMatchObject({ frequency: 'instant', enabled: true, strategy: null, delivery_hour: null, delivery_day_of_week: null });
    });

    it('accepts an explicit null strategy as no strategy', async () => {
      const response = await create(valid({ strategy: null }));
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().strategy).toBeNull();
    });

    it.each([
      ['daily', 9, null],
      ['weekly', 9, 0],
      ['monthly', 9, null],
      ['hourly', null, null],
      ['instant', null, null],
    ])('defaults a %s rule to delivery_hour %s, delivery_day_of_week %s', async (frequency, hour, day) => {
      const response = await create(valid({ frequency }));
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json()).toMatchObject({ frequency, delivery_hour: hour, delivery_day_of_week: day });
    });

    it.each(['instant', 'hourly'])('stores no delivery slot for %s even when one is given', async (frequency) => {
      const response = await create(valid({ frequency, delivery_hour: 5, delivery_day_of_week: 3 }));
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json()).toMatchObject({ frequency, delivery_hour: null, delivery_day_of_week: null });
      const read = await t.api(org.key, 'GET', `${RULES}/${response.json().id}`);
      expect(read.json()).toMatchObject({ delivery_hour: null, delivery_day_of_week: null });
    });

    it.each([0, 23])('accepts delivery_hour %s', async (hour) => {
      const response = await create(valid({ frequency: 'daily', delivery_hour: hour }));
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().delivery_hour).toBe(hour);
    });

    it.each([0, 1, 2, 3, 4, 5, 6])('accepts delivery_day_of_week %s', async (day) => {
      const response = await create(valid({ frequency: 'weekly', delivery_day_of_week: day }));
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().delivery_day_of_week).toBe(day);
    });

    it.each([
      ['1 character', 'a'],
      ['255 characters', 'n'.repeat(255)],
      ['non-ASCII text', 'Überwachung – 監視 🔔'],
    ])('accepts a name of %s', async (_kind, name) => {
      const response = await create(valid({ name }));
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().name).toBe(name);
    });

    it('trims white space around the name, as DRF does', async () => {
      const response = await create(valid({ name: '  Padded rule \n' }));
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().name).toBe('Padded rule');
    });

    // BUG (apps/api/src/app.ts, not fixed here): the JSON parser refuses any body whose text contains
    // the six characters \u0000, so an escaped backslash followed by "u0000" (a name that merely
    // shows the text \u0000, no NUL in it) is refused as if it held a NUL. The check should look at
    // the parsed values (or use a JSON reviver). Flip `it.fails` to `it` once fixed.
    it('accepts a name holding the text \\u0000 (a backslash, not a NUL)', async () => {
      const name = 'C:\\u0000';
      expect(name).toHaveLength(8);
      const response = await create(valid({ name }));
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().name).toBe(name);
    });

    it('collapses duplicate members', async () => {
      const response = await create(valid({ members: [member(0), member(0), member(1), member(0).toUpperCase()] }));
      expect(response.statusCode, response.body).toBe(201);
      const ids = response.json().members.map((m: { team_member_uuid: string }) => m.team_member_uuid);
      expect(ids.sort()).toEqual([member(0), member(1)].sort());
      const { rows } = await t.deps.db.pool.query('SELECT team_member_id FROM notification_rule_members WHERE rule_id = $1', [response.json().id]);
      expect(rows).toHaveLength(2);
    });

    it('gives every rule its own id', async () => {
      const responses = await Promise.all([create(valid()), create(valid()), create(valid())]);
      const ids = responses.map((r) => r.json().id);
      expect(new Set(ids).size).toBe(3);
      for (const id of ids) expect(id).toMatch(UUID);
    });

    it('accepts every scope of the spec', async () => {
      const scopes = [
        'new_issue_detected', 'reappeared_issue_detected', 'asset_security_score_decreased', 'asset_security_score_changed',
        'asset_ssl_changed', 'asset_whois_changed', 'asset_dns_changed', 'domain_security_score_decreased',
        'domain_security_score_changed', 'new_asset_discovered', 'new_asset_added', 'new_vulnerability_detected',
        'reappeared_vulnerability_detected', 'new_email_breach_detected', 'new_suspicious_domain_detected',
        'new_fraudulent_domain_detected', 'new_open_port_detected', 'new_employee_credential_detected',
        'new_client_credential_detected', 'new_payment_credential_detected', 'new_cybersecurity_news_added',
      ];
      const responses = await Promise.all(scopes.map((scope) => create(valid({ scope }))));
      expect(responses.map((r) => r.statusCode)).toEqual(scopes.map(() => 201));
      expect(responses.map((r) => r.json().scope)).toEqual(scopes);
    });

    it('stores the rule once per 201 and counts rows', async () => {
      const before = await countRules();
      expect((await create(valid())).statusCode).toBe(201);
      expect(await countRules()).toBe(before + 1);
    });
  });
});
