import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applicationErrors, gatewayErrors } from '../../apps/api/src/errors/catalog';
import { startTestApp, type TestApp } from '../support/app';

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
    // Admin and bench routes are documented as operator routes; no test or internal route leaks in.
    expect(doc.paths['/admin/v1/organizations/{org_id}/api-keys/{key_id}'].delete).toBeDefined();
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
