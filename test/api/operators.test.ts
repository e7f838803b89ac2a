import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, startTestApp, type TestApp, type TestOrg } from '../support/app';
import { pause } from '../support/wait';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const KEY = /^[A-Za-z0-9]{32}$/;
const RULES = '/v1/platform/notification-rules';
const ORGS = '/admin/v1/organizations';
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const DOCS = 'https://docs.example.test/notification-rules';

/** Asserts the application error body of decisions §1 and returns it. */
function expectApplicationError(response: LightMyRequestResponse, status: number, code: number) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = response.json();
  expect(Object.keys(body).sort()).toEqual(['code', 'details', 'parameters', 'solution']);
  expect(body).toMatchObject({ code, parameters: expect.any(Array) as unknown, solution: DOCS });
  return body as { code: number; details: string | null; parameters: Array<{ param: string; details: string[] }>; solution: string };
}

/** A 400 whose `parameters` name exactly the given fields; returns the messages per field. */
function expectValidation(response: LightMyRequestResponse, ...params: string[]): Record<string, string[]> {
  const body = expectApplicationError(response, 400, 10400);
  expect(body.details).toBeNull();
  expect(body.parameters.map((issue) => issue.param).sort()).toEqual([...params].sort());
  return Object.fromEntries(body.parameters.map((issue) => [issue.param, issue.details]));
}

function expectUnauthorized(response: LightMyRequestResponse) {
  expect(response.statusCode, response.body).toBe(401);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(response.headers['www-authenticate']).toBe('Bearer realm="admin"');
  expect(response.json()).toEqual({ message: 'Unauthorized', request_id: response.headers['service-request-id'] });
}

/** One call per operator route, with a plausible body, for the authentication checks. */
function everyAdminCall(orgId: string): Array<[method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown]> {
  return [
    ['POST', ORGS, { name: 'Intruder' }],
    ['GET', ORGS],
    ['GET', `${ORGS}/${orgId}`],
    ['PATCH', `${ORGS}/${orgId}`, { plan: { groups: ['platform', 'lookup', 'easm'] } }],
    ['POST', `${ORGS}/${orgId}/members`, { email: 'intruder@example.com' }],
    ['GET', `${ORGS}/${orgId}/members`],
    ['DELETE', `${ORGS}/${orgId}/members/${UNKNOWN_ID}`],
    ['POST', `${ORGS}/${orgId}/api-keys`, { name: 'stolen' }],
    ['GET', `${ORGS}/${orgId}/api-keys`],
    ['PATCH', `${ORGS}/${orgId}/api-keys/${UNKNOWN_ID}`, { name: 'renamed' }],
    ['DELETE', `${ORGS}/${orgId}/api-keys/${UNKNOWN_ID}`],
  ];
}

describe('operator API authentication (decisions §7)', () => {
  let t: TestApp;
  let org: TestOrg;

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrg({ memberCount: 0 });
  });
  afterAll(async () => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, payload?: unknown) =>
    t.app.inject({ method, url, headers, payload: payload as never });

  it('refuses every operator route without a token, with the gateway 401 body', async () => {
    for (const [method, url, body] of everyAdminCall(org.id)) expectUnauthorized(await call(method, url, {}, body));
  });

  it('refuses a wrong token', async () => {
    for (const token of ['wrong', `${ADMIN_TOKEN}x`, ADMIN_TOKEN.slice(0, -1), ADMIN_TOKEN.toUpperCase()]) {
      expectUnauthorized(await call('GET', ORGS, { authorization: `Bearer ${token}` }));
    }
  });

  it('refuses the right token under another scheme, or without one', async () => {
    for (const authorization of [
      `Basic ${ADMIN_TOKEN}`,
      `Token ${ADMIN_TOKEN}`,
      `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`,
      ADMIN_TOKEN,
      'Bearer',
      'Bearer ',
    ]) {
      expectUnauthorized(await call('GET', ORGS, { authorization }));
    }
    // Neither the admin token nor a customer key in the apikey header opens operator routes.
    expectUnauthorized(await call('GET', ORGS, { apikey: ADMIN_TOKEN }));
    expectUnauthorized(await call('GET', ORGS, { apikey: org.key }));
  });

  it('makes no change when it refuses a call', async () => {
    const before = (await t.admin('GET', ORGS)).json();
    for (const [method, url, body] of everyAdminCall(org.id)) await call(method, url, { authorization: 'Bearer wrong' }, body);
    expect((await t.admin('GET', ORGS)).json()).toEqual(before);
    expect((await t.admin('GET', `${ORGS}/${org.id}/api-keys`)).json()).toHaveLength(1);
    expect((await t.admin('GET', `${ORGS}/${org.id}/members`)).json()).toEqual([]);
  });

  it('accepts the right token, with the scheme in any case', async () => {
    expect((await call('GET', ORGS, { authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode).toBe(200);
    expect((await call('GET', ORGS, { authorization: `bearer ${ADMIN_TOKEN}` })).statusCode).toBe(200);
  });
});

describe('operator API with ADMIN_TOKEN unset (decisions §7)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ ADMIN_TOKEN: '' });
  });
  afterAll(async () => t.close());

  it('refuses every call, whatever token is presented', async () => {
    for (const authorization of [`Bearer ${ADMIN_TOKEN}`, 'Bearer ', 'Bearer undefined', 'Bearer null', '']) {
      for (const [method, url, payload] of everyAdminCall(UNKNOWN_ID)) {
        const headers = authorization === '' ? {} : { authorization };
        expectUnauthorized(await t.app.inject({ method, url, headers, payload: payload as never }));
      }
    }
    const { rows } = await t.deps.db.pool.query('SELECT id FROM organizations');
    expect(rows).toEqual([]);
  });
});

describe('organizations (decisions §2, §7)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('creates an organization with the defaults: UTC, the platform group and the default limits', async () => {
    const response = await t.admin('POST', ORGS, { name: 'Acme' });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const org = response.json();
    expect(org).toEqual({
      id: expect.stringMatching(UUID) as unknown,
      name: 'Acme',
      timezone: 'UTC',
      plan: { groups: ['platform'], rate_limit_per_second: 10, rate_limit_per_minute: 300, monthly_quota: 1000, max_rules: 1000 },
      default_api_key_id: null,
      added_date: expect.stringMatching(ISO_DATE) as unknown,
      last_update_date: expect.stringMatching(ISO_DATE) as unknown,
    });
  });

  it('creates an organization with a time zone and a plan, trimming the name and collapsing repeated groups', async () => {
    const response = await t.admin('POST', ORGS, {
      name: '  Globex  ',
      timezone: 'Europe/Berlin',
      plan: { groups: ['lookup', 'easm', 'lookup'], rate_limit_per_second: 5, rate_limit_per_minute: 120, monthly_quota: 50_000 },
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({
      name: 'Globex',
      timezone: 'Europe/Berlin',
      plan: { groups: ['lookup', 'easm'], rate_limit_per_second: 5, rate_limit_per_minute: 120, monthly_quota: 50_000 },
    });
  });

  it('fills in the plan fields that are left out', async () => {
    const response = await t.admin('POST', ORGS, { name: 'Partial', plan: { monthly_quota: 7 } });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().plan).toEqual({ groups: ['platform'], rate_limit_per_second: 10, rate_limit_per_minute: 300, monthly_quota: 7, max_rules: 1000 });
  });

  it('refuses a time zone that is not an IANA name with a 400 on timezone', async () => {
    for (const timezone of ['Mars/Olympus_Mons', 'CEST+99', 'not a zone']) {
      const issues = expectValidation(await t.admin('POST', ORGS, { name: 'Zoned', timezone }), 'timezone');
      expect(issues.timezone).toEqual([`"${timezone}" is not a valid time zone. Use an IANA name such as "Europe/Berlin".`]);
    }
  });

  it('requires a name that is not blank', async () => {
    expect(expectValidation(await t.admin('POST', ORGS, {}), 'name').name).toEqual(['This field is required.']);
    expectValidation(await t.admin('POST', ORGS, { name: '' }), 'name');
    expectValidation(await t.admin('POST', ORGS, { name: '   ' }), 'name');
    expect(expectValidation(await t.admin('POST', ORGS, { name: 'x'.repeat(256) }), 'name').name).toEqual([
      'Ensure this field has no more than 255 characters.',
    ]);
    expectValidation(await t.admin('POST', ORGS, { name: 42 }), 'name');
  });

  it('validates the plan', async () => {
    expect(expectValidation(await t.admin('POST', ORGS, { name: 'P', plan: { groups: ['platform', 'nope'] } }), 'plan.groups')['plan.groups']).toEqual([
      '"nope" is not a valid choice.',
    ]);
    expectValidation(await t.admin('POST', ORGS, { name: 'P', plan: { groups: 'platform' } }), 'plan.groups');
    expect(expectValidation(await t.admin('POST', ORGS, { name: 'P', plan: { rate_limit_per_second: 0 } }), 'plan.rate_limit_per_second')['plan.rate_limit_per_second']).toEqual([
      'Ensure this value is greater than or equal to 1.',
    ]);
    expect(expectValidation(await t.admin('POST', ORGS, { name: 'P', plan: { rate_limit_per_minute: 1.5 } }), 'plan.rate_limit_per_minute')['plan.rate_limit_per_minute']).toEqual([
      'A valid integer is required.',
    ]);
    expect(expectValidation(await t.admin('POST', ORGS, { name: 'P', plan: { monthly_quota: '100' } }), 'plan.monthly_quota')['plan.monthly_quota']).toEqual([
      'A valid integer is required.',
    ]);
    expectValidation(await t.admin('POST', ORGS, { name: 'P', plan: { monthly_quota: 1e12 } }), 'plan.monthly_quota');
    expectValidation(await t.admin('POST', ORGS, { name: 'P', plan: 'gold' }), 'plan');
    expectValidation(
      await t.admin('POST', ORGS, { name: 'P', plan: { groups: ['nope'], rate_limit_per_second: -1 } }),
      'plan.groups',
      'plan.rate_limit_per_second',
    );
  });

  it('creates nothing when the body is invalid', async () => {
    const before = (await t.admin('GET', ORGS)).json() as unknown[];
    await t.admin('POST', ORGS, { name: 'Invalid', timezone: 'Nowhere/Nothing' });
    await t.admin('POST', ORGS, { name: 'Invalid', plan: { groups: ['nope'] } });
    expect((await t.admin('GET', ORGS)).json()).toHaveLength(before.length);
  });

  it('lists the organizations in creation order and gets one by id', async () => {
    const first = (await t.admin('POST', ORGS, { name: 'Listed 1' })).json();
    const second = (await t.admin('POST', ORGS, { name: 'Listed 2', timezone: 'America/New_York' })).json();
    const list = await t.admin('GET', ORGS);
    expect(list.statusCode).toBe(200);
    const orgs = list.json() as Array<{ id: string }>;
    const ids = orgs.map((org) => org.id);
    expect(ids).toContain(first.id);
    expect(ids.indexOf(second.id)).toBe(ids.indexOf(first.id) + 1);
    expect(orgs.find((org) => org.id === second.id)).toEqual(second);

    const got = await t.admin('GET', `${ORGS}/${second.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(second);
  });

  it('answers 404 (code 10404) for an unknown or malformed organization id', async () => {
    for (const id of [UNKNOWN_ID, 'not-a-uuid', '12345', `${UNKNOWN_ID}0`]) {
      const body = expectApplicationError(await t.admin('GET', `${ORGS}/${id}`), 404, 10404);
      expect(body.details).toBe('Organization not found.');
      expect(body.parameters).toEqual([]);
      expectApplicationError(await t.admin('PATCH', `${ORGS}/${id}`, { name: 'Ghost' }), 404, 10404);
      expectApplicationError(await t.admin('GET', `${ORGS}/${id}/members`), 404, 10404);
      expectApplicationError(await t.admin('POST', `${ORGS}/${id}/members`, { email: 'ghost@example.com' }), 404, 10404);
      expectApplicationError(await t.admin('GET', `${ORGS}/${id}/api-keys`), 404, 10404);
      expectApplicationError(await t.admin('POST', `${ORGS}/${id}/api-keys`, { name: 'ghost' }), 404, 10404);
    }
  });

  it('changes the name, the time zone and the plan, leaving the rest as it was', async () => {
    const created = (await t.admin('POST', ORGS, { name: 'Before', plan: { groups: ['platform', 'lookup'], monthly_quota: 10 } })).json();
    await pause(5); // a later last_update_date

    const renamed = await t.admin('PATCH', `${ORGS}/${created.id}`, { name: 'After' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ ...created, name: 'After', last_update_date: expect.any(String) as unknown });
    expect(Date.parse(renamed.json().last_update_date)).toBeGreaterThan(Date.parse(created.last_update_date));

    const zoned = await t.admin('PATCH', `${ORGS}/${created.id}`, { timezone: 'Asia/Tokyo' });
    expect(zoned.json()).toMatchObject({ name: 'After', timezone: 'Asia/Tokyo', plan: created.plan });

    // A partial plan changes only the fields it names.
    const limited = await t.admin('PATCH', `${ORGS}/${created.id}`, { plan: { rate_limit_per_second: 3 } });
    expect(limited.json().plan).toEqual({ ...created.plan, rate_limit_per_second: 3 });

    const regrouped = await t.admin('PATCH', `${ORGS}/${created.id}`, { plan: { groups: ['easm'] } });
    expect(regrouped.json().plan).toEqual({ groups: ['easm'], rate_limit_per_second: 3, rate_limit_per_minute: 300, monthly_quota: 10, max_rules: 1000 });

    const capped = await t.admin('PATCH', `${ORGS}/${created.id}`, { plan: { max_rules: 25 } });
    expect(capped.json().plan).toEqual({ groups: ['easm'], rate_limit_per_second: 3, rate_limit_per_minute: 300, monthly_quota: 10, max_rules: 25 });

    const unchanged = await t.admin('PATCH', `${ORGS}/${created.id}`, {});
    expect(unchanged.statusCode).toBe(200);
    expect(unchanged.json()).toMatchObject({ id: created.id, name: 'After', timezone: 'Asia/Tokyo', added_date: created.added_date });

    // What PATCH answered is what is stored.
    expect((await t.admin('GET', `${ORGS}/${created.id}`)).json()).toMatchObject({
      name: 'After',
      timezone: 'Asia/Tokyo',
      plan: { groups: ['easm'], rate_limit_per_second: 3, rate_limit_per_minute: 300, monthly_quota: 10, max_rules: 25 },
    });
  });

  it('refuses an invalid change and keeps the organization as it was', async () => {
    const created = (await t.admin('POST', ORGS, { name: 'Stable', timezone: 'Europe/Paris' })).json();
    expectValidation(await t.admin('PATCH', `${ORGS}/${created.id}`, { timezone: 'Europe/Atlantis' }), 'timezone');
    expectValidation(await t.admin('PATCH', `${ORGS}/${created.id}`, { name: '   ' }), 'name');
    expectValidation(await t.admin('PATCH', `${ORGS}/${created.id}`, { name: 'Changed', plan: { groups: ['gold'] } }), 'plan.groups');
    expectValidation(await t.admin('PATCH', `${ORGS}/${created.id}`, { plan: { monthly_quota: 0 } }), 'plan.monthly_quota');
    expectValidation(await t.admin('PATCH', `${ORGS}/${created.id}`, { plan: { max_rules: 0 } }), 'plan.max_rules');
    expectValidation(await t.admin('PATCH', `${ORGS}/${created.id}`, { plan: { max_rules: 1.5 } }), 'plan.max_rules');
    expect((await t.admin('GET', `${ORGS}/${created.id}`)).json()).toEqual(created);
  });

  it('applies a plan change to API calls at once', async () => {
    const org = await t.createOrg({ memberCount: 0 });
    // Warm the key cache: the organization's plan is now remembered for up to a second.
    expect((await t.api(org.key, 'GET', RULES)).statusCode).toBe(200);

    const narrowed = await t.admin('PATCH', `${ORGS}/${org.id}`, { plan: { groups: ['lookup'] } });
    expect(narrowed.statusCode).toBe(200);
    const refused = await t.api(org.key, 'GET', RULES);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ message: 'You cannot consume this service', request_id: refused.headers['service-request-id'] });

    await t.admin('PATCH', `${ORGS}/${org.id}`, { plan: { groups: ['lookup', 'platform'] } });
    expect((await t.api(org.key, 'GET', RULES)).statusCode).toBe(200);

    // New rate limits apply at once too.
    await t.admin('PATCH', `${ORGS}/${org.id}`, { plan: { rate_limit_per_second: 4321, rate_limit_per_minute: 98_765 } });
    const limited = await t.api(org.key, 'GET', RULES);
    expect(limited.statusCode).toBe(200);
    expect(limited.headers['ratelimit-policy']).toBe('4321;w=1, 98765;w=60');
  });
});

describe('team members (decisions §7)', () => {
  let t: TestApp;
  let orgId: string;
  let otherOrg: TestOrg;
  const members = (id: string) => `${ORGS}/${id}/members`;

  beforeAll(async () => {
    t = await startTestApp();
    orgId = (await t.admin('POST', ORGS, { name: 'Members Inc' })).json().id;
    otherOrg = await t.createOrg({ memberCount: 1 });
  });
  afterAll(async () => t.close());

  it('adds a member, storing the e-mail address lower-cased', async () => {
    const response = await t.admin('POST', members(orgId), { email: '  Alice.Smith@Example.COM ', name: 'Alice' });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toEqual({
      team_member_uuid: expect.stringMatching(UUID) as unknown,
      email: 'alice.smith@example.com',
      name: 'Alice',
      added_date: expect.stringMatching(ISO_DATE) as unknown,
      timezone: null,
      quiet_hours: null,
      bouncing: null,
    });
  });

  it('adds a member without a name', async () => {
    const response = await t.admin('POST', members(orgId), { email: 'bob@example.com' });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ email: 'bob@example.com', name: null });
    const nulled = await t.admin('POST', members(orgId), { email: 'carol@example.com', name: null });
    expect(nulled.statusCode, nulled.body).toBe(201);
    expect(nulled.json().name).toBeNull();
  });

  it('refuses an invalid or missing e-mail address with a 400 on email', async () => {
    for (const email of ['not-an-email', 'a@b', 'two@@example.com', 'spaces in@example.com', 'x@example.com\r\nBcc: y@example.com', '   ']) {
      expect(expectValidation(await t.admin('POST', members(orgId), { email }), 'email').email).toEqual(['Enter a valid email address.']);
    }
    expect(expectValidation(await t.admin('POST', members(orgId), { name: 'Nobody' }), 'email').email).toEqual(['This field is required.']);
    expectValidation(await t.admin('POST', members(orgId), { email: '' }), 'email');
    expectValidation(await t.admin('POST', members(orgId), { email: 42 }), 'email');
  });

  it('refuses a second member with the same address, whatever its case (409)', async () => {
    const body = expectApplicationError(await t.admin('POST', members(orgId), { email: 'ALICE.SMITH@example.com' }), 409, 10409);
    expect(body.details).toBe('A member with this e-mail address already exists in the organization.');
    expectApplicationError(await t.admin('POST', members(orgId), { email: 'bob@example.com', name: 'Bob again' }), 409, 10409);
  });

  it('allows the same address in another organization', async () => {
    const response = await t.admin('POST', members(otherOrg.id), { email: 'alice.smith@example.com' });
    expect(response.statusCode, response.body).toBe(201);
  });

  it('lists the members of one organization in the order they were added', async () => {
    const response = await t.admin('GET', members(orgId));
    expect(response.statusCode).toBe(200);
    const list = response.json() as Array<{ email: string; team_member_uuid: string }>;
    expect(list.map((member) => member.email)).toEqual(['alice.smith@example.com', 'bob@example.com', 'carol@example.com']);
    for (const member of list) expect(Object.keys(member).sort()).toEqual(['added_date', 'bouncing', 'email', 'name', 'quiet_hours', 'team_member_uuid', 'timezone']);
    const other = (await t.admin('GET', members(otherOrg.id))).json() as Array<{ email: string }>;
    expect(other.map((member) => member.email)).toEqual([otherOrg.members[0]!.email, 'alice.smith@example.com']);
  });

  it('removes a member (204) and takes them off every rule', async () => {
    const org = await t.createOrg({ memberCount: 3 });
    const [leaving, staying, third] = org.members as [TestOrg['members'][number], TestOrg['members'][number], TestOrg['members'][number]];
    const rule = await t.api(org.key, 'POST', RULES, {
      name: 'Ports',
      scope: 'new_open_port_detected',
      members: [leaving.team_member_uuid, staying.team_member_uuid],
    });
    expect(rule.statusCode, rule.body).toBe(201);
    const other = await t.api(org.key, 'POST', RULES, { name: 'DNS', scope: 'asset_dns_changed', members: [leaving.team_member_uuid, third.team_member_uuid] });
    expect(other.statusCode, other.body).toBe(201);

    const removed = await t.admin('DELETE', `${members(org.id)}/${leaving.team_member_uuid}`);
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe('');

    const remaining = (await t.admin('GET', members(org.id))).json() as Array<{ team_member_uuid: string }>;
    expect(remaining.map((member) => member.team_member_uuid)).toEqual([staying.team_member_uuid, third.team_member_uuid]);
    const got = await t.api(org.key, 'GET', `${RULES}/${rule.json().id}`);
    expect(got.json().members).toEqual([{ team_member_uuid: staying.team_member_uuid, email: staying.email, subscribed: true }]);
    const listed = (await t.api(org.key, 'GET', RULES)).json() as { results: Array<{ members: Array<{ team_member_uuid: string }> }> };
    const everyone = listed.results.flatMap((result) => result.members.map((member) => member.team_member_uuid));
    expect(everyone).not.toContain(leaving.team_member_uuid);
    expect(everyone).toContain(third.team_member_uuid);

    // The removed member can no longer be named in a rule.
    const again = await t.api(org.key, 'POST', RULES, { name: 'Again', scope: 'new_open_port_detected', members: [leaving.team_member_uuid] });
    expectValidation(again, 'members');
  });

  it('answers 404 for removing an unknown, malformed, already removed or foreign member', async () => {
    const added = (await t.admin('POST', members(orgId), { email: 'temp@example.com' })).json();
    expect((await t.admin('DELETE', `${members(orgId)}/${added.team_member_uuid}`)).statusCode).toBe(204);
    for (const id of [added.team_member_uuid, UNKNOWN_ID, 'not-a-uuid']) {
      const body = expectApplicationError(await t.admin('DELETE', `${members(orgId)}/${id}`), 404, 10404);
      expect(body.details).toBe('Team member not found.');
    }
    // Another organization's member, through this organization's path: 404, and they stay.
    const foreign = otherOrg.members[0]!.team_member_uuid;
    expectApplicationError(await t.admin('DELETE', `${members(orgId)}/${foreign}`), 404, 10404);
    const stillThere = (await t.admin('GET', members(otherOrg.id))).json() as Array<{ team_member_uuid: string }>;
    expect(stillThere.map((member) => member.team_member_uuid)).toContain(foreign);
    // And through an unknown organization.
    expectApplicationError(await t.admin('DELETE', `${members(UNKNOWN_ID)}/${foreign}`), 404, 10404);
  });
});

describe('API keys (decisions §2, §7)', () => {
  let t: TestApp;
  let orgId: string;
  const keys = (id: string) => `${ORGS}/${id}/api-keys`;
  const works = async (key: string) => (await t.api(key, 'GET', RULES)).statusCode;

  const list = async (id: string) => {
    const response = await t.admin('GET', keys(id));
    expect(response.statusCode).toBe(200);
    return { body: response.body, keys: response.json() as Array<{ id: string; name: string; is_default: boolean }> };
  };

  beforeAll(async () => {
    t = await startTestApp();
    orgId = (await t.admin('POST', ORGS, { name: 'Keyholder' })).json().id;
  });
  afterAll(async () => t.close());

  // The tests below build on each other: one organization's keys through their life.
  let first: { id: string; key: string };
  let second: { id: string; key: string };

  it('generates a key: 32 alphanumerics, shown once, the first one the default', async () => {
    const response = await t.admin('POST', keys(orgId), { name: 'Production' });
    expect(response.statusCode, response.body).toBe(201);
    const body = response.json();
    expect(body).toMatchObject({
      id: expect.stringMatching(UUID) as unknown,
      name: 'Production',
      key: expect.stringMatching(KEY) as unknown,
      is_default: true,
      added_date: expect.stringMatching(ISO_DATE) as unknown,
    });
    first = { id: body.id, key: body.key };
    expect((await t.admin('GET', `${ORGS}/${orgId}`)).json().default_api_key_id).toBe(first.id);
    expect(await works(first.key)).toBe(200);
  });

  it('generates further keys that are not the default', async () => {
    const response = await t.admin('POST', keys(orgId), { name: '  Staging ' });
    expect(response.statusCode, response.body).toBe(201);
    const body = response.json();
    expect(body).toMatchObject({ name: 'Staging', key: expect.stringMatching(KEY) as unknown, is_default: false });
    second = { id: body.id, key: body.key };
    expect(second.key).not.toBe(first.key);
    expect(await works(second.key)).toBe(200);
    expect((await t.admin('GET', `${ORGS}/${orgId}`)).json().default_api_key_id).toBe(first.id);
  });

  it('stores only a hash of each key', async () => {
    const dump = JSON.stringify((await t.deps.db.pool.query('SELECT * FROM api_keys')).rows);
    expect(dump).not.toContain(first.key);
    expect(dump).not.toContain(second.key);
  });

  it('requires a key name', async () => {
    expect(expectValidation(await t.admin('POST', keys(orgId), {}), 'name').name).toEqual(['This field is required.']);
    expectValidation(await t.admin('POST', keys(orgId), { name: '' }), 'name');
    expectValidation(await t.admin('POST', keys(orgId), { name: '  ' }), 'name');
    expectValidation(await t.admin('POST', keys(orgId), { name: 'k'.repeat(256) }), 'name');
    expect((await list(orgId)).keys).toHaveLength(2);
  });

  it('lists keys without key material', async () => {
    const { body, keys: listed } = await list(orgId);
    expect(listed.map((key) => [key.id, key.name, key.is_default])).toEqual([
      [first.id, 'Production', true],
      [second.id, 'Staging', false],
    ]);
    for (const key of listed) {
      expect(key).not.toHaveProperty('key');
      expect(key).toEqual({
        id: expect.stringMatching(UUID) as unknown,
        name: expect.any(String) as unknown,
        prefix: expect.any(String) as unknown,
        is_default: expect.any(Boolean) as unknown,
        added_date: expect.stringMatching(ISO_DATE) as unknown,
      });
    }
    expect(body).not.toContain(first.key);
    expect(body).not.toContain(second.key);
  });

  it('renames a key', async () => {
    const response = await t.admin('PATCH', `${keys(orgId)}/${second.id}`, { name: 'Staging (old cluster)' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ id: second.id, name: 'Staging (old cluster)', is_default: false });
    expect(response.json()).not.toHaveProperty('key');
    expect(response.body).not.toContain(second.key);
    expect((await list(orgId)).keys.find((key) => key.id === second.id)?.name).toBe('Staging (old cluster)');
    expectValidation(await t.admin('PATCH', `${keys(orgId)}/${second.id}`, { name: ' ' }), 'name');
    // Renaming does not affect whether the key works.
    expect(await works(second.key)).toBe(200);
  });

  it('accepts only true for is_default', async () => {
    expectValidation(await t.admin('PATCH', `${keys(orgId)}/${first.id}`, { is_default: false }), 'is_default');
    expectValidation(await t.admin('PATCH', `${keys(orgId)}/${first.id}`, { is_default: 'yes' }), 'is_default');
    expect((await list(orgId)).keys.filter((key) => key.is_default).map((key) => key.id)).toEqual([first.id]);
  });

  it('refuses to delete the default key (409, code 10409) and the key keeps working', async () => {
    const body = expectApplicationError(await t.admin('DELETE', `${keys(orgId)}/${first.id}`), 409, 10409);
    expect(body.details).toBe('The default API key cannot be deleted. Make another key the default first.');
    expect(await works(first.key)).toBe(200);
    expect((await list(orgId)).keys.map((key) => key.id)).toEqual([first.id, second.id]);
  });

  it('makes another key the default, leaving exactly one default', async () => {
    const response = await t.admin('PATCH', `${keys(orgId)}/${second.id}`, { is_default: true });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ id: second.id, is_default: true });
    const { keys: listed } = await list(orgId);
    expect(listed.filter((key) => key.is_default).map((key) => key.id)).toEqual([second.id]);
    expect((await t.admin('GET', `${ORGS}/${orgId}`)).json().default_api_key_id).toBe(second.id);
    // Making the default key the default again changes nothing.
    expect((await t.admin('PATCH', `${keys(orgId)}/${second.id}`, { is_default: true })).statusCode).toBe(200);
    expect((await list(orgId)).keys.filter((key) => key.is_default).map((key) => key.id)).toEqual([second.id]);
  });

  it('refuses to delete the new default', async () => {
    expectApplicationError(await t.admin('DELETE', `${keys(orgId)}/${second.id}`), 409, 10409);
    expect(await works(second.key)).toBe(200);
  });

  it('deletes the former default after the switch (204), and it stops working at once', async () => {
    expect(await works(first.key)).toBe(200); // cached now
    const response = await t.admin('DELETE', `${keys(orgId)}/${first.id}`);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    const refused = await t.api(first.key, 'GET', RULES);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ message: 'Unauthorized', request_id: refused.headers['service-request-id'] });
    expect((await list(orgId)).keys.map((key) => key.id)).toEqual([second.id]);
    expect(await works(second.key)).toBe(200);
  });

  it('deletes a non-default key (204), and it gets 401 immediately', async () => {
    const extra = (await t.admin('POST', keys(orgId), { name: 'Temporary' })).json();
    expect(extra.is_default).toBe(false);
    expect(await works(extra.key)).toBe(200); // cached now
    expect((await t.admin('DELETE', `${keys(orgId)}/${extra.id}`)).statusCode).toBe(204);
    expect(await works(extra.key)).toBe(401);
    // Deleting it again, or a key that never was: 404.
    for (const id of [extra.id, UNKNOWN_ID, 'not-a-uuid']) {
      const body = expectApplicationError(await t.admin('DELETE', `${keys(orgId)}/${id}`), 404, 10404);
      expect(body.details).toBe('API key not found.');
      expectApplicationError(await t.admin('PATCH', `${keys(orgId)}/${id}`, { name: 'Ghost' }), 404, 10404);
      expectApplicationError(await t.admin('PATCH', `${keys(orgId)}/${id}`, { is_default: true }), 404, 10404);
    }
    expect((await t.admin('GET', `${ORGS}/${orgId}`)).json().default_api_key_id).toBe(second.id);
  });

  it("answers 404 for another organization's keys and leaves them alone", async () => {
    const other = await t.createOrg({ memberCount: 0 });
    const otherSecond = (await t.admin('POST', keys(other.id), { name: 'Other second' })).json();
    for (const id of [other.keyId, otherSecond.id]) {
      expectApplicationError(await t.admin('DELETE', `${keys(orgId)}/${id}`), 404, 10404);
      expectApplicationError(await t.admin('PATCH', `${keys(orgId)}/${id}`, { name: 'Hijacked' }), 404, 10404);
      expectApplicationError(await t.admin('PATCH', `${keys(orgId)}/${id}`, { is_default: true }), 404, 10404);
    }
    // Nothing changed on either side.
    expect((await t.admin('GET', `${ORGS}/${orgId}`)).json().default_api_key_id).toBe(second.id);
    const otherKeys = (await list(other.id)).keys;
    expect(otherKeys.map((key) => [key.id, key.name, key.is_default])).toEqual([
      [other.keyId, 'default', true],
      [otherSecond.id, 'Other second', false],
    ]);
    expect((await list(orgId)).keys.map((key) => key.id)).toEqual([second.id]);
    expect(await works(other.key)).toBe(200);
    expect(await works(otherSecond.key)).toBe(200);
  });
});

describe('operator changes reach every API instance (decisions §2)', () => {
  // Two instances over one database. The test harness does not subscribe its
  // instances to the Redis invalidation channel (apps/api/src/main.ts does), so
  // what this checks is the bound of decisions §2: no cache keeps a deleted key
  // or an old plan alive for more than a second.
  let a: TestApp;
  let b: TestApp;
  const SLACK_MS = 250;
  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({}, { db: a.db });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a key deleted through one instance stops working on the other within a second', async () => {
    const org = await a.createOrg({ memberCount: 0 });
    const extra = (await a.admin('POST', `${ORGS}/${org.id}/api-keys`, { name: 'Shared' })).json();
    const cachedAt = Date.now();
    expect((await b.api(extra.key, 'GET', RULES)).statusCode).toBe(200); // now cached on b
    expect((await a.admin('DELETE', `${ORGS}/${org.id}/api-keys/${extra.id}`)).statusCode).toBe(204);
    await expect.poll(async () => (await b.api(extra.key, 'GET', RULES)).statusCode, { timeout: 3000, interval: 10 }).toBe(401);
    expect(Date.now() - cachedAt).toBeLessThanOrEqual(1000 + SLACK_MS);
    expect((await b.api(org.key, 'GET', RULES)).statusCode).toBe(200);
  });

  it('a plan changed through one instance applies on the other within a second', async () => {
    const org = await a.createOrg({ memberCount: 0 });
    const cachedAt = Date.now();
    expect((await b.api(org.key, 'GET', RULES)).statusCode).toBe(200); // now cached on b
    expect((await a.admin('PATCH', `${ORGS}/${org.id}`, { plan: { groups: ['easm'] } })).statusCode).toBe(200);
    await expect.poll(async () => (await b.api(org.key, 'GET', RULES)).statusCode, { timeout: 3000, interval: 10 }).toBe(403);
    expect(Date.now() - cachedAt).toBeLessThanOrEqual(1000 + SLACK_MS);
  });
});
