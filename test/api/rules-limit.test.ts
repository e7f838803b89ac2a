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

  it('stays exact where creates stop running side by side and start running alone', async () => {
    // Side by side while fewer than max_rules − (max_connections + max_prepared_transactions) rules are
    // committed, alone after: a burst across that line ends at the limit exactly.
    const { in_flight: inFlight } = (
      await t.deps.db.pool.query<{ in_flight: number }>(
        "SELECT current_setting('max_connections')::int + current_setting('max_prepared_transactions')::int AS in_flight",
      )
    ).rows[0]!;
    const maxRules = inFlight + 20;
    const org = await t.createOrg({ plan: { max_rules: maxRules } });
    for (let i = 0; i < 15; i++) expect((await t.api(org.key, 'POST', RULES, rule(org, `r${i}`))).statusCode).toBe(201);
    const room = maxRules - 15;
    const statuses = (await Promise.all(Array.from({ length: room + 15 }, (_, i) => t.api(org.key, 'POST', RULES, rule(org, `burst ${i}`))))).map(
      (response) => response.statusCode,
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(room);
    expect(statuses.filter((status) => status === 403)).toHaveLength(15);
    expect(await count(org)).toBe(maxRules);
  });

  it('counts rules however they come and go: bulk inserts and deletes on any connection, an organization deleted with its rules', async () => {
    const org = await t.createOrg({ plan: { max_rules: 4 } });
    const { pool } = t.deps.db;
    const counted = async (organizationId: string) =>
      Number((await pool.query<{ n: string | null }>('SELECT sum(rules) AS n FROM rule_counts WHERE organization_id = $1', [organizationId])).rows[0]!.n ?? 0);
    const insertRules = (organizationId: string, names: string[]) =>
      pool.query(
        `INSERT INTO notification_rules (id, organization_id, name, scope, frequency)
         SELECT gen_random_uuid(), $1, name, 'new_open_port_detected', 'instant' FROM unnest($2::text[]) AS name`,
        [organizationId, names],
      );
    await insertRules(org.id, ['bulk 1', 'bulk 2', 'bulk 3']);
    expect((await t.api(org.key, 'POST', RULES, rule(org, 'fourth'))).statusCode).toBe(201);
    expect((await t.api(org.key, 'POST', RULES, rule(org, 'fifth'))).statusCode).toBe(403);
    // Deleted in one statement, on whichever connection: counted down from another slot than the one that counted them in.
    await Promise.all([
      pool.query("DELETE FROM notification_rules WHERE organization_id = $1 AND name IN ('bulk 1', 'bulk 2')", [org.id]),
      pool.query("DELETE FROM notification_rules WHERE organization_id = $1 AND name = 'bulk 3'", [org.id]),
    ]);
    expect(await counted(org.id)).toBe(1);
    for (let i = 0; i < 3; i++) expect((await t.api(org.key, 'POST', RULES, rule(org, `again ${i}`))).statusCode).toBe(201);
    expect((await t.api(org.key, 'POST', RULES, rule(org, 'no room'))).statusCode).toBe(403);
    expect(await counted(org.id)).toBe(await count(org));

    // An organization goes with its rules and their counts; the cascade does not count them down into a row of its own.
    const { id: goneId } = (await pool.query<{ id: string }>("INSERT INTO organizations (id, name) VALUES (gen_random_uuid(), 'leaving') RETURNING id")).rows[0]!;
    await insertRules(goneId, ['a', 'b']);
    expect(await counted(goneId)).toBe(2);
    await pool.query('DELETE FROM organizations WHERE id = $1', [goneId]);
    expect((await pool.query('SELECT 1 FROM rule_counts WHERE organization_id = $1', [goneId])).rowCount).toBe(0);
  });

  it('runs creates far from the limit beside one in flight, and one near it only after', async () => {
    // A transaction holding the organization's row as a create running side by side does, until released.
    const holdRow = async (org: TestOrg) => {
      const client = await t.deps.db.pool.connect();
      await client.query('BEGIN');
      await client.query('SELECT 1 FROM organizations WHERE id = $1 FOR SHARE', [org.id]);
      return async () => {
        await client.query('COMMIT');
        client.release();
      };
    };
    const settledWithin = <T>(promise: Promise<T>, ms: number) =>
      Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

    const roomy = await t.createOrg();
    const releaseRoomy = await holdRow(roomy);
    try {
      const create = t.api(roomy.key, 'POST', RULES, rule(roomy, 'beside'));
      expect(await settledWithin(create, 5000)).toBe(true);
      expect((await create).statusCode).toBe(201);
    } finally {
      await releaseRoomy();
    }

    const tight = await t.createOrg({ plan: { max_rules: 5 } });
    const releaseTight = await holdRow(tight);
    const create = t.api(tight.key, 'POST', RULES, rule(tight, 'after'));
    expect(await settledWithin(create, 500)).toBe(false);
    await releaseTight();
    expect((await create).statusCode).toBe(201);
  });

  it('stays exact near the limit whatever the trigger count says', async () => {
    // A TRUNCATE (or rows loaded with triggers off) leaves rule_counts wrong: near the limit the rules themselves are counted.
    const org = await t.createOrg({ plan: { max_rules: 5 } });
    for (let i = 0; i < 2; i++) expect((await t.api(org.key, 'POST', RULES, rule(org, `r${i}`))).statusCode).toBe(201);
    await t.deps.db.pool.query('UPDATE rule_counts SET rules = rules + 100 WHERE organization_id = $1', [org.id]);
    for (let i = 2; i < 5; i++) expect((await t.api(org.key, 'POST', RULES, rule(org, `r${i}`))).statusCode).toBe(201);
    expect((await t.api(org.key, 'POST', RULES, rule(org, 'one too many'))).statusCode).toBe(403);
    expect(await count(org)).toBe(5);
  });

  it('defaults to 1,000 rules', async () => {
    const org = await t.createOrg();
    const plan = (await t.admin('GET', `/admin/v1/organizations/${org.id}`)).json().plan;
    expect(plan.max_rules).toBe(1000);
  });
});
