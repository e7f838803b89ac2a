import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestOrg } from '../support/app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RULES = '/v1/platform/notification-rules';

describe('API key authentication (spec: Authentication; decisions §1, §2)', () => {
  let t: TestApp;
  let org: TestOrg;

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrg();
  });
  afterAll(async () => t.close());

  it('answers 401 "No API key found in request" without the apikey header', async () => {
    const response = await t.app.inject({ method: 'GET', url: RULES });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Key');
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.json()).toEqual({ message: 'No API key found in request', request_id: response.headers['service-request-id'] });
  });

  it('treats an empty apikey header as absent', async () => {
    const response = await t.app.inject({ method: 'GET', url: RULES, headers: { apikey: '' } });
    expect(response.statusCode).toBe(401);
    expect(response.json().message).toBe('No API key found in request');
  });

  it.each([
    ['unknown', 'A'.repeat(32)],
    ['malformed', 'not-a-key'],
    ['too long', 'a'.repeat(33)],
  ])('answers 401 "Unauthorized" for a %s key', async (_kind, key) => {
    const response = await t.app.inject({ method: 'GET', url: RULES, headers: { apikey: key } });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Key');
    expect(response.json()).toEqual({ message: 'Unauthorized', request_id: response.headers['service-request-id'] });
  });

  it('does not accept the key as a query parameter', async () => {
    const response = await t.app.inject({ method: 'GET', url: `${RULES}?apikey=${org.key}` });
    expect(response.statusCode).toBe(401);
    expect(response.json().message).toBe('No API key found in request');
  });

  it('accepts a valid key on GET and POST alike', async () => {
    expect((await t.api(org.key, 'GET', RULES)).statusCode).toBe(200);
    const created = await t.api(org.key, 'POST', RULES, { name: 'r', scope: 'new_open_port_detected', members: [org.members[0]!.team_member_uuid] });
    expect(created.statusCode).toBe(201);
  });

  it('answers 403 "You cannot consume this service" when the plan lacks the endpoint group', async () => {
    const lookupOnly = await t.createOrg({ plan: { groups: ['lookup'] } });
    const response = await t.api(lookupOnly.key, 'GET', RULES);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ message: 'You cannot consume this service', request_id: response.headers['service-request-id'] });
  });

  it('stops accepting a deleted key at once', async () => {
    const other = await t.admin('POST', `/admin/v1/organizations/${org.id}/api-keys`, { name: 'second' });
    const { key, id } = other.json();
    expect((await t.api(key, 'GET', RULES)).statusCode).toBe(200);
    expect((await t.admin('DELETE', `/admin/v1/organizations/${org.id}/api-keys/${id}`)).statusCode).toBe(204);
    const after = await t.api(key, 'GET', RULES);
    expect(after.statusCode).toBe(401);
    expect(after.json().message).toBe('Unauthorized');
  });

  it('stores keys only as hashes', async () => {
    const { rows } = await t.deps.db.pool.query<{ key_hash: string; key_prefix: string }>('SELECT key_hash, key_prefix FROM api_keys');
    for (const row of rows) {
      expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.key_hash).not.toContain(org.key);
    }
    const dump = JSON.stringify((await t.deps.db.pool.query('SELECT * FROM api_keys')).rows);
    expect(dump).not.toContain(org.key);
  });
});

describe('service-request-id and gateway errors (decisions §1)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('puts a UUID v4 on every response: success, error and unknown route', async () => {
    const responses = await Promise.all([
      t.app.inject({ method: 'GET', url: '/health/live' }),
      t.app.inject({ method: 'GET', url: RULES }),
      t.app.inject({ method: 'GET', url: '/v1/nowhere' }),
      t.app.inject({ method: 'PATCH', url: RULES }),
    ]);
    const ids = responses.map((response) => response.headers['service-request-id']);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers an unknown path or method with the gateway 404', async () => {
    for (const [method, url] of [['GET', '/v1/nowhere'], ['PATCH', RULES], ['GET', '/']] as const) {
      const response = await t.app.inject({ method, url });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ message: 'no Route matched with those values', request_id: response.headers['service-request-id'] });
    }
  });
});
