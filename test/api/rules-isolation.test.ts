import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestOrg } from '../support/app';

const RULES = '/v1/platform/notification-rules';
const DOCS = 'https://docs.example.test/notification-rules';
const UNKNOWN_ID = '3d1e4c9a-5b7f-4e2a-9c8d-1f0a2b3c4d5e';

type Rule = Record<string, unknown> & { id: string; members: Array<{ team_member_uuid: string; email: string }> };
type Response = Awaited<ReturnType<TestApp['api']>>;

function expectNotFound(response: Response) {
  expect(response.statusCode, response.body).toBe(404);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(response.json()).toEqual({ code: 10404, details: expect.any(String), parameters: [], solution: DOCS });
}

describe('GET one and DELETE', () => {
  let t: TestApp;
  let org: TestOrg;
  const member = (i = 0) => org.members[i]!.team_member_uuid;

  async function createRule(extra: Record<string, unknown> = {}): Promise<Rule> {
    const response = await t.api(org.key, 'POST', RULES, { name: 'Rule', scope: 'asset_dns_changed', members: [member()], ...extra });
    expect(response.statusCode, response.body).toBe(201);
    return response.json();
  }

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrg({ memberCount: 2 });
  });
  afterAll(async () => t.close());

  it('GET answers the full resource, strategy included, as create answered it', async () => {
    const strategy = {
      must: [{ name: 'severity', type: 'in', value: ['high', 'critical'] }],
      should: [{ name: 'tags', type: 'contains_any', value: ['production'] }],
      must_not: [{ name: 'data.port', type: 'eq', value: 22 }],
    };
    const created = await createRule({ strategy, frequency: 'weekly', delivery_hour: 8, delivery_day_of_week: 2, members: [member(0), member(1)] });
    const response = await t.api(org.key, 'GET', `${RULES}/${created.id}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const rule = response.json();
    expect(rule).toEqual(created);
    expect(rule).toMatchObject({ strategy, frequency: 'weekly', delivery_hour: 8, delivery_day_of_week: 2 });
    expect(Object.keys(rule).sort()).toEqual(
      ['id', 'name', 'scope', 'strategy', 'frequency', 'delivery_hour', 'delivery_day_of_week', 'members', 'enabled', 'renotify_after_hours', 'added_date', 'last_update_date'].sort(),
    );
  });

  it('GET answers strategy null for a rule made without one', async () => {
    const created = await createRule();
    const rule = (await t.api(org.key, 'GET', `${RULES}/${created.id}`)).json();
    expect(rule).toHaveProperty('strategy', null);
  });

  it.each([UNKNOWN_ID, 'not-a-uuid', '42', 'x'.repeat(100)])('GET and DELETE answer 404 code 10404 for the id %j', async (id) => {
    expectNotFound(await t.api(org.key, 'GET', `${RULES}/${id}`));
    expectNotFound(await t.api(org.key, 'DELETE', `${RULES}/${id}`));
  });

  // BUG (apps/api/src/app.ts, not fixed here): ids over Fastify's maxParamLength (100) get Fastify's
  // own 414 body and an invalid percent-escape its own 400 FST_ERR_BAD_URL body, before any hook runs
  // (no service-request-id, no apikey check). Decisions §3 wants a 404 whatever the id's form.
  // Fix with Fastify's `frameworkErrors` option in app.ts, then flip `it.fails` to `it`.
  it.each(['x'.repeat(101), '%zz'])('GET and DELETE answer 404 code 10404 for the id %j (Fastify router bug)', async (id) => {
    const get = await t.api(org.key, 'GET', `${RULES}/${id}`);
    expectNotFound(get);
    expect(get.headers['service-request-id']).toBeDefined();
    expectNotFound(await t.api(org.key, 'DELETE', `${RULES}/${id}`));
  });

  it('DELETE answers 204 with no body; the rule is then gone everywhere', async () => {
    const keep = await createRule({ name: 'Keep' });
    const gone = await createRule({ name: 'Gone', members: [member(0), member(1)] });
    const response = await t.api(org.key, 'DELETE', `${RULES}/${gone.id}`);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expectNotFound(await t.api(org.key, 'GET', `${RULES}/${gone.id}`));
    expectNotFound(await t.api(org.key, 'DELETE', `${RULES}/${gone.id}`));
    expectNotFound(await t.api(org.key, 'PUT', `${RULES}/${gone.id}`, { name: 'x', members: [member()], enabled: true }));
    const ids = (await t.api(org.key, 'GET', `${RULES}?page_size=100`)).json().results.map((r: Rule) => r.id);
    expect(ids).not.toContain(gone.id);
    expect(ids).toContain(keep.id);
    const links = await t.deps.db.pool.query('SELECT 1 FROM notification_rule_members WHERE rule_id = $1', [gone.id]);
    expect(links.rowCount).toBe(0);
    // The rule's members are still members of the organization, and the other rule is untouched.
    const members = await t.admin('GET', `/admin/v1/organizations/${org.id}/members`);
    expect(JSON.stringify(members.json())).toContain(member(1));
    expect((await t.api(org.key, 'GET', `${RULES}/${keep.id}`)).json()).toEqual(keep);
  });

  it('DELETE with a body is still a delete', async () => {
    const rule = await createRule();
    const response = await t.api(org.key, 'DELETE', `${RULES}/${rule.id}`, { anything: true });
    expect(response.statusCode, response.body).toBe(204);
    expectNotFound(await t.api(org.key, 'GET', `${RULES}/${rule.id}`));
  });
});

describe('tenant isolation on every rule endpoint', () => {
  let t: TestApp;
  let a: TestOrg;
  let b: TestOrg;
  let bRules: Rule[];
  let bSnapshot: string;

  const dump = async () => {
    const rules = await t.deps.db.pool.query(
      `SELECT id, organization_id, name, scope, strategy, frequency, delivery_hour, delivery_day_of_week, enabled, added_date, last_update_date
         FROM notification_rules WHERE organization_id = $1 ORDER BY id`,
      [b.id],
    );
    const links = await t.deps.db.pool.query(
      `SELECT rm.rule_id, rm.team_member_id FROM notification_rule_members rm
         JOIN notification_rules r ON r.id = rm.rule_id WHERE r.organization_id = $1 ORDER BY 1, 2`,
      [b.id],
    );
    return JSON.stringify({ rules: rules.rows, links: links.rows });
  };

  beforeAll(async () => {
    t = await startTestApp();
    [a, b] = await Promise.all([t.createOrg({ memberCount: 2 }), t.createOrg({ memberCount: 2 })]);
    const aBody = { name: 'Shared name', scope: 'new_open_port_detected', members: [a.members[0]!.team_member_uuid] };
    expect((await t.api(a.key, 'POST', RULES, aBody)).statusCode).toBe(201);
    bRules = [];
    for (const extra of [{ enabled: true }, { enabled: false, frequency: 'daily' }, { strategy: { must: [{ name: 'asset', type: 'eq', value: 'b.example.com' }] } }]) {
      const response = await t.api(b.key, 'POST', RULES, {
        name: 'Shared name',
        scope: 'new_open_port_detected',
        members: b.members.map((m) => m.team_member_uuid),
        ...extra,
      });
      expect(response.statusCode, response.body).toBe(201);
      bRules.push(response.json());
    }
    bSnapshot = await dump();
  });
  afterAll(async () => t.close());

  it("GET of another organization's rule is a 404, the same answer as for an id that does not exist", async () => {
    for (const rule of bRules) {
      const foreign = await t.api(a.key, 'GET', `${RULES}/${rule.id}`);
      expectNotFound(foreign);
      const missing = await t.api(a.key, 'GET', `${RULES}/${UNKNOWN_ID}`);
      expect(foreign.body).toBe(missing.body);
    }
  });

  it("PUT on another organization's rule is a 404, with the caller's members or the owner's", async () => {
    for (const rule of bRules) {
      expectNotFound(await t.api(a.key, 'PUT', `${RULES}/${rule.id}`, { name: 'Hijacked', members: [a.members[0]!.team_member_uuid], enabled: false }));
      expectNotFound(await t.api(a.key, 'PUT', `${RULES}/${rule.id}`, { name: 'Hijacked', members: [b.members[0]!.team_member_uuid], enabled: false, frequency: 'hourly' }));
    }
  });

  it("DELETE of another organization's rule is a 404", async () => {
    for (const rule of bRules) expectNotFound(await t.api(a.key, 'DELETE', `${RULES}/${rule.id}`));
  });

  it("never lists another organization's rules, whatever the filters", async () => {
    const bIds = new Set(bRules.map((rule) => rule.id));
    const queries = [
      '',
      'page_size=100',
      'name__contains=Shared',
      'scope__in=new_open_port_detected',
      'enabled=false',
      'frequency__in=daily',
      `members__in=${b.members[0]!.team_member_uuid}`,
      `members__nin=${a.members[0]!.team_member_uuid}`,
      'ordering=-last_update_date',
      'added_date__gte=2000-01-01',
    ];
    for (const query of queries) {
      const response = await t.api(a.key, 'GET', `${RULES}?${query}`);
      expect(response.statusCode, `${query}: ${response.body}`).toBe(200);
      const body = response.json();
      for (const item of body.results) expect(bIds.has(item.id), query).toBe(false);
      expect(body.result_count, query).toBe(body.results.length);
      expect(body.result_count, query).toBeLessThanOrEqual(1);
    }
    // And the other way round: B sees its three rules and not A's.
    const bList = (await t.api(b.key, 'GET', RULES)).json();
    expect(bList.result_count).toBe(3);
    expect(new Set(bList.results.map((r: Rule) => r.id))).toEqual(bIds);
  });

  it('cannot point a rule at another organization\'s members, on create or update', async () => {
    const foreign = b.members[0]!.team_member_uuid;
    const created = await t.api(a.key, 'POST', RULES, { name: 'x', scope: 'new_issue_detected', members: [foreign] });
    expect(created.statusCode).toBe(400);
    expect(created.json().parameters.map((p: { param: string }) => p.param)).toEqual(['members']);
    const own = (await t.api(a.key, 'GET', RULES)).json().results[0] as Rule;
    const updated = await t.api(a.key, 'PUT', `${RULES}/${own.id}`, { name: 'x', members: [foreign], enabled: true });
    expect(updated.statusCode).toBe(400);
    expect(updated.json().parameters.map((p: { param: string }) => p.param)).toEqual(['members']);
  });

  it("leaves the other organization's rules exactly as they were after all those attempts", async () => {
    expect(await dump()).toBe(bSnapshot);
    for (const rule of bRules) {
      const response = await t.api(b.key, 'GET', `${RULES}/${rule.id}`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual(rule);
    }
  });

  it("the owner can still update and delete its own rule, and only its own", async () => {
    const [first] = bRules;
    const updated = await t.api(b.key, 'PUT', `${RULES}/${first!.id}`, { name: 'Renamed by owner', members: [b.members[1]!.team_member_uuid], enabled: true });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json().name).toBe('Renamed by owner');
    // A's rule is untouched by B's update.
    const aList = (await t.api(a.key, 'GET', RULES)).json();
    expect(aList.results.map((r: Rule) => r.name)).toEqual(['Shared name']);
    expect((await t.api(b.key, 'DELETE', `${RULES}/${first!.id}`)).statusCode).toBe(204);
    expect((await t.api(a.key, 'GET', RULES)).json().result_count).toBe(1);
  });
});
