import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { applicationErrors, gatewayErrors } from '../../apps/api/src/errors/catalog';
import { ADMIN_TOKEN, INGEST_TOKEN, startTestApp, type TestApp } from '../support/app';

type Doc = { openapi: string; info: { title: string; description: string }; paths: Record<string, Record<string, { tags?: string[]; security?: unknown[] }>>; components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> } };

/** Valid against the OpenAPI 3.1 JSON schema, and every $ref inside it resolves. */
async function expectValidOpenApi31(doc: unknown): Promise<void> {
  const validator = new Validator();
  const result = await validator.validate(doc as Record<string, unknown>);
  expect(result.errors, 'OpenAPI schema errors').toBeUndefined();
  expect(result.valid).toBe(true);
  expect(validator.version).toBe('3.1');
  expect(() => validator.resolveRefs()).not.toThrow();
}

describe('OpenAPI document and docs page', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('serves an OpenAPI 3.1 document generated from the route schemas', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const doc = response.json();
    expect(doc.openapi).toBe('3.1.0');
    const rules = doc.paths['/v1/platform/notification-rules'];
    expect(Object.keys(rules).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/v1/platform/notification-rules/{rule_id}']).sort()).toEqual(['delete', 'get', 'put']);
    expect(doc.components.securitySchemes.apikey).toEqual({ type: 'apiKey', in: 'header', name: 'apikey' });
    const listParams = rules.get.parameters.map((p: { name: string }) => p.name);
    for (const name of ['page', 'page_size', 'ordering', 'name__contains', 'scope__in', 'members__nin', 'enabled', 'added_date__lte', 'last_update_date__gte']) {
      expect(listParams).toContain(name);
    }
    // The condition language is shown with its shape, not as the internal validation keyword.
    const strategy = rules.post.requestBody.content['application/json'].schema.properties.strategy;
    expect(strategy.properties.must.type).toBe('array');
    expect(JSON.stringify(doc)).not.toContain('x-filters');
    // The customers' API and the scanners' ingest; not the operator API, not the probes.
    expect(Object.keys(doc.paths).filter((path) => !/^\/v1\/(platform|easm|lookup|ingest)\//.test(path))).toEqual([]);
    expect(doc.paths['/v1/ingest/events'].post.security).toEqual([{ ingest: [] }]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apikey', 'ingest']);
    expect(/\/admin\/v1|ADMIN_TOKEN/.test(JSON.stringify(doc))).toBe(false);
  });

  it('is a valid OpenAPI 3.1 document, and so is the operator one', async () => {
    await expectValidOpenApi31((await t.app.inject({ method: 'GET', url: '/openapi.json' })).json());
    await expectValidOpenApi31((await t.admin('GET', '/admin/openapi.json')).json());
  });

  it('documents the operator API in a document of its own, behind the admin token', async () => {
    const response = await t.admin('GET', '/admin/openapi.json');
    expect(response.statusCode).toBe(200);
    const doc = response.json() as Doc;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toMatch(/operator/i);
    expect(doc.paths['/admin/v1/organizations/{org_id}/api-keys/{key_id}']!.delete).toBeDefined();
    expect(doc.paths['/admin/v1/deliveries/{delivery_id}/retry']!.post!.security).toEqual([{ admin: [] }]);
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['admin']);
    // Every documented route is in exactly one of the two documents (the probes in neither).
    const whole = t.app.swagger() as unknown as Doc;
    const publicPaths = Object.keys(((await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc).paths);
    const adminPaths = Object.keys(doc.paths);
    expect(adminPaths.length).toBeGreaterThanOrEqual(10);
    expect(adminPaths.every((path) => path.startsWith('/admin/v1/'))).toBe(true);
    expect([...publicPaths, ...adminPaths, '/health/live', '/health/ready'].sort()).toEqual(Object.keys(whole.paths).sort());
    // Only what the operator API uses: no customer schema rides along.
    expect(JSON.stringify(doc).includes('"apikey"')).toBe(false);
    expect(Object.keys(doc.components.schemas).length).toBeLessThan(Object.keys(whole.components.schemas).length);

    for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: `Bearer ${INGEST_TOKEN}` }, { apikey: ADMIN_TOKEN }]) {
      const refused = await t.app.inject({ method: 'GET', url: '/admin/openapi.json', headers });
      expect(refused.statusCode, JSON.stringify(headers)).toBe(401);
      expect(refused.headers['www-authenticate']).toBe('Bearer realm="admin"');
      expect(refused.body).not.toContain('/admin/v1/');
    }
  });

  it('serves the operator docs page at /admin/docs to a console session or the admin token; a browser without one goes to the login', async () => {
    const anonymous = await t.app.inject({ method: 'GET', url: '/admin/docs' });
    expect(anonymous.statusCode).toBe(302);
    expect(anonymous.headers.location).toBe('/admin/login?next=%2Fadmin%2Fdocs');
    expect((await t.app.inject({ method: 'GET', url: '/admin/docs/json' })).statusCode).toBe(401);

    const login = await t.app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${encodeURIComponent(ADMIN_TOKEN)}&next=%2Fadmin%2Fdocs`,
    });
    expect(login.statusCode).toBe(303);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const page = await t.app.inject({ method: 'GET', url: '/admin/docs', headers: { cookie } });
    const html = page.statusCode === 302 ? await t.app.inject({ method: 'GET', url: page.headers.location as string, headers: { cookie } }) : page;
    expect(html.statusCode).toBe(200);
    expect(html.headers['content-type']).toContain('text/html');
    // What the page loads: the operator document, with the cookie alone.
    const json = await t.app.inject({ method: 'GET', url: '/admin/docs/json', headers: { cookie } });
    expect(json.statusCode).toBe(200);
    expect(json.json()).toEqual((await t.admin('GET', '/admin/openapi.json')).json());
    expect((await t.app.inject({ method: 'GET', url: '/admin/openapi.json', headers: { cookie } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/admin/docs/json', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).statusCode).toBe(200);

    // The public page's document is the public one.
    const publicJson = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json() as Doc;
    expect(publicJson).toEqual((await t.app.inject({ method: 'GET', url: '/openapi.json' })).json());
    expect(Object.keys(publicJson.paths).some((path) => path.startsWith('/admin'))).toBe(false);
  });

  it('documents every error of the catalog', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const description = doc.info.description as string;
    for (const error of Object.values(gatewayErrors)) expect(description).toContain(error.message);
    for (const error of Object.values(applicationErrors)) expect(description).toContain(String(error.code));
  });

  it('serves a readable docs page at /docs', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/docs' });
    const page = response.statusCode === 302 ? await t.app.inject({ method: 'GET', url: response.headers.location as string }) : response;
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
  });

  it('uses DOCS_URL as the solution link of application errors', async () => {
    const org = await t.createOrg();
    const response = await t.api(org.key, 'POST', '/v1/platform/notification-rules', {});
    expect(response.json().solution).toBe('https://docs.example.test/notification-rules');
  });
});

describe('health', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('is live and ready when PostgreSQL and Redis answer', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/health/live' })).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ok', checks: { database: { status: 'ok' }, redis: { status: 'ok' } } });
  });

  it('is not ready when Redis is gone, and says which check failed', async () => {
    t.deps.redis.disconnect();
    const ready = await t.app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks.redis.status).toBe('fail');
    expect(ready.json().checks.database.status).toBe('ok');
    expect((await t.app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
  });
});

describe('server errors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({}, {
      // An error that even describing fails on (its validation list is not a list).
      beforeReady: (app) => app.get('/test/indescribable', async () => {
        throw Object.assign(new Error('odd'), { validation: 42, validationContext: 'body' });
      }),
    });
  });
  afterAll(async () => t.close());

  it('answers a database failure with a generic body: no stack trace, no SQL', async () => {
    const org = await t.createOrg();
    // Warm the key cache, then take the database away.
    expect((await t.api(org.key, 'GET', '/v1/platform/notification-rules')).statusCode).toBe(200);
    const original = t.deps.db.pool.query.bind(t.deps.db.pool);
    t.deps.db.pool.query = (() => Promise.reject(new Error('relation "notification_rules" does not exist at SELECT r.* FROM'))) as never;
    try {
      // A page not seen before: the list cache cannot answer for the database.
      const response = await t.api(org.key, 'GET', '/v1/platform/notification-rules?ordering=name');
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({
        code: 10500,
        details: 'An unexpected error occurred. Please try again later.',
        parameters: [],
        solution: 'https://docs.example.test/notification-rules',
      });
      expect(response.body).not.toMatch(/SELECT|relation|at .*\.ts/);
      expect(response.headers['service-request-id']).toBeDefined();
    } finally {
      t.deps.db.pool.query = original as never;
    }
  });

  it('answers with a §1 body even when describing the error fails', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/test/indescribable' });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toMatchObject({ code: 10500, parameters: [] });
    expect(response.headers['service-request-id']).toBeDefined();
  });
});
