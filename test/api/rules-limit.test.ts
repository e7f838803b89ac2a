import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestOrg } from '../support/app';

const RULES = '/v1/platform/notification-rules';
const DOCS = 'https://docs.example.test/notification-rules';

describe("an organization's plan caps its notification rules (plan.max_rules)", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const rule = (org: TestOrg, name: string) => ({ name, scope: 'new_open_port_detected', members: [org.members[0]!.team_member_uuid] });
  const count = async (org: TestOrg) =>
    Number((await t.deps.db.pool.query<{ n: string }>('SELECT count(*) AS n FROM notification_rules WHERE organization_id = $1', [org.id])).rows[0]!.n);

  it('answers 403 code 10403 with a clear body once the limit is reached, and stores nothing', async () => {
    const org = await t.createOrg({ plan: { max_rules: 3 } });
    for (let i = 0; i < 3; i++) expect((await t.api(org.key, 'POST', RULES, rule(org, `r${i}`))).statusCode).toBe(201);
    const refused = await t.api(org.key, 'POST', RULES, rule(org, 'one too many'));
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(refused.json()).toEqual({
      code: 10403,
      details: "This organization has reached its plan's limit of 3 notification rules. Delete rules it no longer needs, or ask for a larger plan.",
      parameters: [],
      solution: DOCS,
    });
    expect(await count(org)).toBe(3);
    // A body that is wrong anyway says so first.
    const invalid = await t.api(org.key, 'POST', RULES, { ...rule(org, 'x'), members: ['00000000-0000-4000-8000-000000000000'] });
    expect(invalid.statusCode).toBe(400);

    // Deleting one makes room; so does a larger plan, set by an operator.
    const first = (await t.api(org.key, 'GET', `${RULES}?ordering=name`)).json().results[0].id as string;
    expect((await t.api(org.key, 'DELETE', `${RULES}/${first}`)).statusCode).toBe(204);
    expect((await t.api(org.key, 'POST', RULES, rule(org, 'in its place'))).statusCode).toBe(201);
    expect((await t.api(org.key, 'POST', RULES, rule(org, 'no room'))).statusCode).toBe(403);
    expect((await t.admin('PATCH', `/admin/v1/organizations/${org.id}`, { plan: { max_rules: 4 } })).statusCode).toBe(200);
    expect((await t.api(org.key, 'POST', RULES, rule(org, 'room again'))).statusCode).toBe(201);
    expect(await count(org)).toBe(4);
  });

  it('counts per organization', async () => {
    const full = await t.createOrg({ plan: { max_rules: 1 } });
    const other = await t.createOrg({ plan: { max_rules: 1 } });
    expect((await t.api(full.key, 'POST', RULES, rule(full, 'only'))).statusCode).toBe(201);
    expect((await t.api(full.key, 'POST', RULES, rule(full, 'second'))).statusCode).toBe(403);
    expect((await t.api(other.key, 'POST', RULES, rule(other, 'theirs'))).statusCode).toBe(201);
  });

  it('lets exactly one of many concurrent creates take the last place', async () => {
    const org = await t.createOrg({ plan: { max_rules: 5 } });
    for (let i = 0; i < 4; i++) expect((await t.api(org.key, 'POST', RULES, rule(org, `r${i}`))).statusCode).toBe(201);
    const statuses = (await Promise.all(Array.from({ length: 12 }, (_, i) => t.api(org.key, 'POST', RULES, rule(org, `racer ${i}`))))).map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 403)).toHaveLength(11);
    expect(await count(org)).toBe(5);
  });

  it('defaults to 1,000 rules', async () => {
    const org = await t.createOrg();
    const plan = (await t.admin('GET', `/admin/v1/organizations/${org.id}`)).json().plan;
    expect(plan.max_rules).toBe(1000);
  });
});
