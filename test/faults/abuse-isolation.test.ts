/**
 * Tenant isolation on every route that takes an id, with the routes read from Fastify's route
 * table: a route added later with a path parameter fails "covers every route" until a check for it
 * is written here. Organization A's key (or an operator's call under A's path) must meet B's ids
 * exactly as it meets ids that do not exist, and B's data must be left as it was.
 */
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unsubscribeToken } from '@notify/core';
import { ADMIN_TOKEN, INGEST_TOKEN, startTestApp, type TestApp, type TestOrg } from '../support/app';
import { expectApplicationError, paramsOf, routeTable, type RouteEntry } from './abuse-support';

const RULES = '/v1/platform/notification-rules';
const SILENCES = '/v1/platform/notification-silences';

type Check = () => Promise<void>;

describe('tenant isolation on every route that takes an id (faults)', () => {
  let t: TestApp;
  let a: TestOrg;
  let b: TestOrg;
  let aRule: string;
  let bRules: string[];
  let bSilence: string;
  let bSecondKey: { id: string; key: string };
  let snapshot: string;
  let attempts = 0;

  /** Everything B owns, as one string: rules, their members, members, keys, assets. */
  const dumpB = async () => {
    const q = async (sql: string) => (await t.deps.db.pool.query(sql, [b.id])).rows;
    return JSON.stringify({
      org: await q('SELECT id, name, timezone, default_api_key_id, updated_at FROM organizations WHERE id = $1'),
      rules: await q('SELECT * FROM notification_rules WHERE organization_id = $1 ORDER BY id'),
      links: await q('SELECT rm.* FROM notification_rule_members rm JOIN notification_rules r ON r.id = rm.rule_id WHERE r.organization_id = $1 ORDER BY 1, 2'),
      members: await q('SELECT * FROM team_members WHERE organization_id = $1 ORDER BY id'),
      keys: await q('SELECT * FROM api_keys WHERE organization_id = $1 ORDER BY id'),
      silences: await q('SELECT * FROM notification_silences WHERE organization_id = $1 ORDER BY id'),
    });
  };

  const call = (headers: Record<string, string>, method: string, url: string, payload?: unknown) => {
    attempts++;
    return t.app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  };
  const asA = (method: string, url: string, payload?: unknown) => call({ apikey: a.key }, method, url, payload);
  const asAdmin = (method: string, url: string, payload?: unknown) => call({ authorization: `Bearer ${ADMIN_TOKEN}` }, method, url, payload);

  /** The 404 for a foreign id is byte for byte the 404 for an id that names nothing. */
  function expectSameNotFound(foreign: LightMyRequestResponse, missing: LightMyRequestResponse, label: string) {
    expectApplicationError(foreign, 404, label);
    expectApplicationError(missing, 404, `${label} (missing)`);
    expect(foreign.body, label).toBe(missing.body);
  }

  /** Spellings of a foreign id: as given, upper-cased, braced, padded. */
  const spellings = (id: string) => [id, id.toUpperCase(), `{${id}}`, ` ${id}`, id.replace(/-/g, '')];

  beforeAll(async () => {
    t = await startTestApp();
    // One after the other: the helper names members' addresses after its organization counter.
    a = await t.createOrg({ memberCount: 2, plan: { groups: ['platform', 'easm'] } });
    b = await t.createOrg({ memberCount: 3, plan: { groups: ['platform', 'easm'] } });
    const created = await t.api(a.key, 'POST', RULES, { name: 'A rule', scope: 'new_issue_detected', members: [a.members[0]!.team_member_uuid] });
    aRule = created.json().id;
    bRules = [];
    for (const extra of [{}, { enabled: false, frequency: 'weekly' }]) {
      const response = await t.api(b.key, 'POST', RULES, { name: 'B rule', scope: 'new_issue_detected', members: b.members.map((m) => m.team_member_uuid), ...extra });
      expect(response.statusCode, response.body).toBe(201);
      bRules.push(response.json().id);
    }
    const key = await t.admin('POST', `/admin/v1/organizations/${b.id}/api-keys`, { name: 'second' });
    bSecondKey = { id: key.json().id, key: key.json().key };
    // An asset of B's in the inventory, that A's search must never return.
    const ingest = await t.app.inject({
      method: 'POST',
      url: '/v1/ingest/events',
      headers: { authorization: `Bearer ${INGEST_TOKEN}` },
      payload: { id: `iso-${randomUUID()}`, organization_id: b.id, scope: 'new_issue_detected', occurred_at: '2026-01-01T00:00:00Z', asset: 'b-only.example.com', title: 't', tags: ['b-secret'] },
    });
    expect(ingest.statusCode, ingest.body).toBe(202);
    const silence = await t.api(b.key, 'POST', SILENCES, { filters: { must: [{ name: 'asset', type: 'eq', value: 'b-only.example.com' }] }, ends_at: new Date(Date.now() + 86_400_000).toISOString(), comment: 'B' });
    expect(silence.statusCode, silence.body).toBe(201);
    bSilence = silence.json().id;
    snapshot = await dumpB();
  });
  afterAll(async () => {
    await t.close();
    console.info(`abuse-isolation: ${attempts} requests`);
  });

  const RULE_BODY = () => ({ name: 'Hijacked', members: [a.members[0]!.team_member_uuid], enabled: false });

  /** One check per id-taking route; the route table decides which must exist. */
  const checks: Record<string, Check> = {
    async [`GET ${RULES}/:rule_id`]() {
      for (const id of bRules) for (const spelled of spellings(id)) expectSameNotFound(await asA('GET', `${RULES}/${encodeURIComponent(spelled)}`), await asA('GET', `${RULES}/${randomUUID()}`), `GET ${spelled}`);
    },
    async [`PUT ${RULES}/:rule_id`]() {
      for (const id of bRules) {
        for (const spelled of spellings(id)) {
          const missing = await asA('PUT', `${RULES}/${randomUUID()}`, RULE_BODY());
          expectSameNotFound(await asA('PUT', `${RULES}/${encodeURIComponent(spelled)}`, RULE_BODY()), missing, `PUT ${spelled}`);
          // With B's own members in the body: still B's rule is not A's to see (body checks come first, members are A's problem).
          const withB = await asA('PUT', `${RULES}/${encodeURIComponent(spelled)}`, { ...RULE_BODY(), members: [b.members[0]!.team_member_uuid] });
          expect([400, 404], withB.body).toContain(withB.statusCode);
          expectApplicationError(withB, withB.statusCode);
        }
      }
    },
    async [`DELETE ${RULES}/:rule_id`]() {
      for (const id of bRules) for (const spelled of spellings(id)) expectSameNotFound(await asA('DELETE', `${RULES}/${encodeURIComponent(spelled)}`), await asA('DELETE', `${RULES}/${randomUUID()}`), `DELETE ${spelled}`);
    },
    async ['GET /admin/v1/organizations/:org_id']() {
      const one = await asAdmin('GET', `/admin/v1/organizations/${a.id}`);
      expect(one.json().id).toBe(a.id);
      expectSameNotFound(await asAdmin('GET', `/admin/v1/organizations/not-an-id`), await asAdmin('GET', `/admin/v1/organizations/${randomUUID()}`), 'GET org');
    },
    async ['PATCH /admin/v1/organizations/:org_id']() {
      expectSameNotFound(await asAdmin('PATCH', `/admin/v1/organizations/${randomUUID()}`, { name: 'x' }), await asAdmin('PATCH', `/admin/v1/organizations/nope`, { name: 'x' }), 'PATCH org');
    },
    async ['GET /admin/v1/organizations/:org_id/members']() {
      const listed = (await asAdmin('GET', `/admin/v1/organizations/${a.id}/members`)).json() as Array<{ team_member_uuid: string }>;
      expect(listed.map((m) => m.team_member_uuid).sort()).toEqual(a.members.map((m) => m.team_member_uuid).sort());
      expectApplicationError(await asAdmin('GET', `/admin/v1/organizations/${randomUUID()}/members`), 404);
    },
    async ['POST /admin/v1/organizations/:org_id/members']() {
      // B's member's address is free in A (addresses are unique per organization), and stays B's in B.
      const added = await asAdmin('POST', `/admin/v1/organizations/${a.id}/members`, { email: b.members[0]!.email });
      expect(added.statusCode, added.body).toBe(201);
      expect(added.json().team_member_uuid).not.toBe(b.members[0]!.team_member_uuid);
      expect((await asAdmin('DELETE', `/admin/v1/organizations/${a.id}/members/${added.json().team_member_uuid}`)).statusCode).toBe(204);
      expectApplicationError(await asAdmin('POST', `/admin/v1/organizations/${randomUUID()}/members`, { email: 'x@example.com' }), 404);
    },
    async ['DELETE /admin/v1/organizations/:org_id/members/:team_member_uuid']() {
      for (const member of b.members) {
        expectSameNotFound(
          await asAdmin('DELETE', `/admin/v1/organizations/${a.id}/members/${member.team_member_uuid}`),
          await asAdmin('DELETE', `/admin/v1/organizations/${a.id}/members/${randomUUID()}`),
          'DELETE B member under A',
        );
      }
    },
    async ['PATCH /admin/v1/organizations/:org_id/members/:team_member_uuid']() {
      for (const member of b.members) {
        expectSameNotFound(
          await asAdmin('PATCH', `/admin/v1/organizations/${a.id}/members/${member.team_member_uuid}`, { timezone: 'Asia/Tokyo' }),
          await asAdmin('PATCH', `/admin/v1/organizations/${a.id}/members/${randomUUID()}`, { timezone: 'Asia/Tokyo' }),
          'PATCH of B member under A',
        );
      }
      const unchanged = (await asAdmin('GET', `/admin/v1/organizations/${b.id}/members`)).json() as Array<{ timezone: string | null }>;
      expect(unchanged.map((member) => member.timezone)).toEqual(b.members.map(() => null));
    },
    async ['POST /admin/v1/organizations/:org_id/members/:team_member_uuid/clear-bounce']() {
      for (const member of b.members) {
        expectSameNotFound(
          await asAdmin('POST', `/admin/v1/organizations/${a.id}/members/${member.team_member_uuid}/clear-bounce`),
          await asAdmin('POST', `/admin/v1/organizations/${a.id}/members/${randomUUID()}/clear-bounce`),
          'clear-bounce of B member under A',
        );
      }
    },
    async ['GET /admin/v1/organizations/:org_id/api-keys']() {
      const listed = (await asAdmin('GET', `/admin/v1/organizations/${a.id}/api-keys`)).json() as Array<{ id: string }>;
      expect(listed.map((k) => k.id)).toEqual([a.keyId]);
      expectApplicationError(await asAdmin('GET', `/admin/v1/organizations/${randomUUID()}/api-keys`), 404);
    },
    async ['POST /admin/v1/organizations/:org_id/api-keys']() {
      expectApplicationError(await asAdmin('POST', `/admin/v1/organizations/${randomUUID()}/api-keys`, { name: 'x' }), 404);
    },
    async ['PATCH /admin/v1/organizations/:org_id/api-keys/:key_id']() {
      for (const id of [b.keyId, bSecondKey.id]) {
        for (const body of [{ name: 'Hijacked' }, { is_default: true }, { name: 'Hijacked', is_default: true }]) {
          expectSameNotFound(
            await asAdmin('PATCH', `/admin/v1/organizations/${a.id}/api-keys/${id}`, body),
            await asAdmin('PATCH', `/admin/v1/organizations/${a.id}/api-keys/${randomUUID()}`, body),
            `PATCH B key under A ${JSON.stringify(body)}`,
          );
        }
      }
    },
    async ['DELETE /admin/v1/organizations/:org_id/api-keys/:key_id']() {
      for (const id of [bSecondKey.id, b.keyId]) {
        expectSameNotFound(
          await asAdmin('DELETE', `/admin/v1/organizations/${a.id}/api-keys/${id}`),
          await asAdmin('DELETE', `/admin/v1/organizations/${a.id}/api-keys/${randomUUID()}`),
          'DELETE B key under A',
        );
      }
      // B's keys still work.
      expect((await t.api(bSecondKey.key, 'GET', RULES)).statusCode).toBe(200);
      expect((await t.api(b.key, 'GET', RULES)).statusCode).toBe(200);
    },
    async ['GET /admin/v1/organizations/:org_id/notification-rules']() {
      const listed = (await asAdmin('GET', `/admin/v1/organizations/${a.id}/notification-rules`)).json();
      expect(listed.results.map((r: { id: string }) => r.id)).toEqual([aRule]);
      expectApplicationError(await asAdmin('GET', `/admin/v1/organizations/${randomUUID()}/notification-rules`), 404);
    },
    // Operators act on any organization's rule by its id (no tenant in the path): an id that names
    // no rule, whatever its form, is the same 404.
    async ['POST /admin/v1/notification-rules/:rule_id/flush']() {
      for (const id of [randomUUID(), 'nope', bRules[0]!.toUpperCase().replace(/-/g, '')]) expectSameNotFound(await asAdmin('POST', `/admin/v1/notification-rules/${id}/flush`), await asAdmin('POST', `/admin/v1/notification-rules/${randomUUID()}/flush`), `flush ${id}`);
    },
    async ['GET /admin/v1/notification-rules/:rule_id/deliveries']() {
      for (const id of [randomUUID(), 'nope']) expectSameNotFound(await asAdmin('GET', `/admin/v1/notification-rules/${id}/deliveries`), await asAdmin('GET', `/admin/v1/notification-rules/${randomUUID()}/deliveries`), `deliveries ${id}`);
    },
    async [`GET ${RULES}/:rule_id/deliveries`]() {
      for (const id of bRules) for (const spelled of spellings(id)) expectSameNotFound(await asA('GET', `${RULES}/${encodeURIComponent(spelled)}/deliveries`), await asA('GET', `${RULES}/${randomUUID()}/deliveries`), `GET deliveries ${spelled}`);
    },
    // A test send of B's rule, by A: the 404 of a missing rule, and nothing sent nor counted.
    async [`POST ${RULES}/:rule_id/test`]() {
      for (const id of bRules) for (const spelled of spellings(id)) expectSameNotFound(await asA('POST', `${RULES}/${encodeURIComponent(spelled)}/test`), await asA('POST', `${RULES}/${randomUUID()}/test`), `POST test ${spelled}`);
      const { rows } = await t.deps.db.pool.query(`SELECT count(*)::int AS n FROM deliveries WHERE rule_id = ANY($1::uuid[])`, [bRules]);
      expect(rows[0].n).toBe(0);
    },
    async [`GET ${SILENCES}/:silence_id`]() {
      for (const spelled of spellings(bSilence)) expectSameNotFound(await asA('GET', `${SILENCES}/${encodeURIComponent(spelled)}`), await asA('GET', `${SILENCES}/${randomUUID()}`), `GET silence ${spelled}`);
    },
    async [`DELETE ${SILENCES}/:silence_id`]() {
      for (const spelled of spellings(bSilence)) expectSameNotFound(await asA('DELETE', `${SILENCES}/${encodeURIComponent(spelled)}`), await asA('DELETE', `${SILENCES}/${randomUUID()}`), `DELETE silence ${spelled}`);
    },
    // Unsubscribe links name a rule and a member under the service's signature: one made without
    // it, for B's rule and member, is the page of a link that names nothing.
    async ['GET /unsubscribe/:token']() {
      const forged = unsubscribeToken('not-the-service-secret-but-32-chars-long', bRules[0]!, b.members[0]!.team_member_uuid);
      const [foreign, missing] = [await call({}, 'GET', `/unsubscribe/${forged}`), await call({}, 'GET', `/unsubscribe/${'A'.repeat(64)}`)];
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(missing.body);
    },
    async ['POST /unsubscribe/:token']() {
      const forged = unsubscribeToken('not-the-service-secret-but-32-chars-long', bRules[0]!, b.members[0]!.team_member_uuid);
      const [foreign, missing] = [await call({}, 'POST', `/unsubscribe/${forged}`), await call({}, 'POST', `/unsubscribe/${'A'.repeat(64)}`)];
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(missing.body);
    },
    async ['POST /admin/v1/deliveries/:delivery_id/retry']() {
      for (const id of [randomUUID(), 'nope']) expectSameNotFound(await asAdmin('POST', `/admin/v1/deliveries/${id}/retry`), await asAdmin('POST', `/admin/v1/deliveries/${randomUUID()}/retry`), `retry ${id}`);
    },
  };

  /** Routes with a parameter that names no tenant's data: the queue dashboard (operator session only, see abuse-admin-auth). */
  const exempt = (route: RouteEntry) => route.url.startsWith('/admin/queues/');

  it('covers every route with a path parameter (a new one needs a check here)', () => {
    const withIds = routeTable(t.app).filter((route) => route.params.length > 0 && !exempt(route));
    expect(withIds.length).toBeGreaterThanOrEqual(Object.keys(checks).length);
    const missing = withIds.map((route) => `${route.method} ${route.url}`).filter((name) => !(name in checks));
    expect(missing).toEqual([]);
    // And no check names a route that is gone.
    const names = new Set(withIds.map((route) => `${route.method} ${route.url}`));
    expect(Object.keys(checks).filter((name) => !names.has(name))).toEqual([]);
  });

  it.each(Object.keys(checks))('%s: a foreign id gets the 404 of a missing one', async (name) => {
    await checks[name]!();
  });

  it("never takes B's members into A's rules, on create or update", async () => {
    for (const member of b.members) {
      for (const members of [[member.team_member_uuid], [a.members[0]!.team_member_uuid, member.team_member_uuid], [member.team_member_uuid.toUpperCase()]]) {
        const created = await asA('POST', RULES, { name: 'x', scope: 'new_issue_detected', members });
        expect(paramsOf(created), created.body).toEqual(['members']);
        expectApplicationError(created, 400);
        const updated = await asA('PUT', `${RULES}/${aRule}`, { name: 'x', enabled: true, members });
        expect(paramsOf(updated), updated.body).toEqual(['members']);
        expectApplicationError(updated, 400);
      }
    }
    const mine = (await asA('GET', `${RULES}/${aRule}`)).json();
    expect(mine.members.map((m: { team_member_uuid: string }) => m.team_member_uuid)).toEqual([a.members[0]!.team_member_uuid]);
  });

  it("never lists or finds B's data from A: rules, member filters, assets", async () => {
    const text = async (response: Promise<LightMyRequestResponse>) => {
      const r = await response;
      expect(r.statusCode, r.body).toBeLessThan(300);
      return r.body;
    };
    const bodies = [
      await text(asA('GET', RULES)),
      await text(asA('GET', `${RULES}?name__contains=B`)),
      await text(asA('GET', `${RULES}?members__in=${b.members.map((m) => m.team_member_uuid).join(',')}`)),
      await text(asA('GET', `${RULES}?enabled=false&frequency__in=weekly`)),
      await text(asA('POST', '/v1/easm/assets/search', {})),
      await text(asA('POST', '/v1/easm/assets/search', { filters: { must: [{ name: 'tags', type: 'contains_any', value: ['b-secret'] }] } })),
      await text(asA('POST', '/v1/easm/assets/search', { filters: { must: [{ name: 'asset', type: 'wildcard', value: '*' }] } })),
      await text(asAdmin('GET', `/admin/v1/organizations/${a.id}/members`)),
      await text(asAdmin('GET', `/admin/v1/organizations/${a.id}/api-keys`)),
      await text(asAdmin('GET', `/admin/v1/organizations/${a.id}/notification-rules`)),
    ];
    const bIds = [b.id, b.keyId, bSecondKey.id, ...bRules, ...b.members.map((m) => m.team_member_uuid), ...b.members.map((m) => m.email), 'b-only.example.com', 'b-secret'];
    for (const body of bodies) for (const id of bIds) expect(body, id).not.toContain(id);
    // B sees its own, so the searches above were not empty by accident.
    expect(await text(call({ apikey: b.key }, 'POST', '/v1/easm/assets/search', {}))).toContain('b-only.example.com');
  });

  it("leaves B's data exactly as it was after every attempt", async () => {
    expect(await dumpB()).toBe(snapshot);
  });
});
