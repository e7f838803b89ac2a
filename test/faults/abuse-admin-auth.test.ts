/**
 * Every operator route (the operator API under /admin/v1, the queue dashboard and console under
 * their session, /metrics) refuses every credential that is not its own: none, a wrong token, a
 * customer's API key (in its header or as a bearer), the ingest token, the metrics token (which opens
 * /metrics only), the admin token in the wrong place. The routes come from Fastify's route table,
 * so a route added later is checked without being listed; one no rule here classifies fails the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, INGEST_TOKEN, startTestApp, type TestApp, type TestOrg } from '../support/app';
import { expectGatewayError, fill, routeTable, type RouteEntry } from './abuse-support';

const METRICS_TOKEN = 'test-metrics-token-abuse-4242-abcdef';

type Guard = 'admin' | 'metrics' | 'session' | 'operator-docs' | 'apikey' | 'ingest' | 'public';

/** Who may call a route, by its path (docs/operating.md; decisions §2, §5). */
function guardOf(route: RouteEntry): Guard | undefined {
  const { url } = route;
  if (url.startsWith('/admin/v1/')) return 'admin';
  if (url === '/metrics') return 'metrics';
  if (url === '/admin/console' || url.startsWith('/admin/console/') || url.startsWith('/admin/queues')) return 'session';
  if (url === '/admin/openapi.json' || url === '/admin/docs' || url.startsWith('/admin/docs/')) return 'operator-docs';
  if (/^\/v1\/(platform|easm|lookup)\//.test(url)) return 'apikey';
  if (url.startsWith('/v1/ingest/')) return 'ingest';
  // The unsubscribe page: its signed token in the path is the credential (docs/api-guide.md: What a rule sent, and leaving it).
  if (url === '/unsubscribe/:token') return 'public';
  if (['/admin', '/admin/login', '/admin/logout', '/admin/assets/console.css', '/openapi.json', '/health/live', '/health/ready'].includes(url) || url.startsWith('/docs')) return 'public';
  return undefined;
}

describe('operator routes refuse every credential but their own (faults)', () => {
  let t: TestApp;
  let org: TestOrg;
  let routes: RouteEntry[];
  let ids: Record<string, string>;
  let requests = 0;

  beforeAll(async () => {
    t = await startTestApp({ METRICS_TOKEN });
    org = await t.createOrg({ plan: { groups: ['platform', 'lookup', 'easm'] } });
    routes = routeTable(t.app);
    ids = { org_id: org.id, key_id: org.keyId, team_member_uuid: org.members[0]!.team_member_uuid, rule_id: org.id, delivery_id: org.id, queueName: 'send', jobId: '1', queueStatus: 'failed', schedulerId: 'x' };
  });
  afterAll(async () => {
    await t.close();
    console.info(`abuse-admin-auth: ${requests} requests`);
  });

  const send = (route: RouteEntry, headers: Record<string, string>, query = '') => {
    requests++;
    const body = ['POST', 'PUT', 'PATCH'].includes(route.method) ? { name: 'Intruder', email: 'intruder@example.com', token: ADMIN_TOKEN } : undefined;
    return t.app.inject({ method: route.method as 'GET', url: `${fill(route.url, ids)}${query}`, headers, ...(body ? { payload: body } : {}) });
  };

  /** What an intruder might present. Each is a wrong credential for the admin API and the dashboard. */
  const intruders = (): Array<[string, Record<string, string>, string?]> => [
    ['nothing', {}],
    ['a wrong bearer token', { authorization: 'Bearer wrong-token-0123456789' }],
    ['the admin token with one character changed', { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}X` }],
    ['the admin token plus a character', { authorization: `Bearer ${ADMIN_TOKEN}X` }],
    ['an empty bearer', { authorization: 'Bearer ' }],
    ['a customer API key in its header', { apikey: org.key }],
    ['a customer API key as a bearer', { authorization: `Bearer ${org.key}` }],
    ['the ingest token', { authorization: `Bearer ${INGEST_TOKEN}` }],
    ['the admin token in the apikey header', { apikey: ADMIN_TOKEN }],
    ['the admin token as Basic credentials', { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` }],
    ['the admin token without a scheme', { authorization: ADMIN_TOKEN }],
    ['the admin token in the query string', {}, `?token=${ADMIN_TOKEN}&access_token=${ADMIN_TOKEN}&apikey=${ADMIN_TOKEN}`],
    ['a forged session cookie with the console header', { cookie: 'notify_admin_session=s%3AAAAAAAAAAAAAAAAAAAAAAAAA.9999999999999.forged', 'x-requested-with': 'notify-console' }],
  ];

  it('classifies every route of the app (a new route needs a rule here)', () => {
    // The table was read right: every entry is a route the router knows.
    expect(routes.filter((route) => !t.app.hasRoute({ method: route.method as 'GET', url: route.url }))).toEqual([]);
    const unclassified = routes.filter((route) => guardOf(route) === undefined).map((route) => `${route.method} ${route.url}`);
    expect(unclassified).toEqual([]);
    expect(routes.filter((route) => guardOf(route) === 'admin').length).toBeGreaterThanOrEqual(15);
    expect(routes.filter((route) => guardOf(route) === 'session').length).toBeGreaterThanOrEqual(30);
  });

  it('the operator API (/admin/v1/**) answers 401 "Unauthorized" with the gateway body to every wrong credential', async () => {
    const orgsBefore = (await t.admin('GET', '/admin/v1/organizations')).body;
    const credentials = [...intruders(), ['the metrics token', { authorization: `Bearer ${METRICS_TOKEN}` }] as [string, Record<string, string>]];
    for (const route of routes.filter((r) => guardOf(r) === 'admin')) {
      for (const [label, headers, query] of credentials) {
        const response = await send(route, headers, query);
        expectGatewayError(response, 401, 'Unauthorized', `${route.method} ${route.url} with ${label}`);
        expect(response.headers['www-authenticate']).toBe('Bearer realm="admin"');
      }
    }
    // Nothing was created, changed or deleted by any of them.
    expect((await t.admin('GET', '/admin/v1/organizations')).body).toBe(orgsBefore);
    expect((await t.api(org.key, 'GET', '/v1/platform/notification-rules')).statusCode).toBe(200);
  });

  it('a real session cookie counts on the operator API only with the console header', async () => {
    const cookie = await login();
    for (const route of routes.filter((r) => guardOf(r) === 'admin' && r.method !== 'GET')) {
      expectGatewayError(await send(route, { cookie }), 401, 'Unauthorized', `${route.method} ${route.url} with a session and no console header`);
      expectGatewayError(await send(route, { cookie, 'x-requested-with': 'XMLHttpRequest' }), 401, 'Unauthorized', `${route.method} ${route.url} with another x-requested-with`);
    }
    // The check is not vacuous: with the header the same session is an operator.
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/organizations', headers: { cookie, 'x-requested-with': 'notify-console' } })).statusCode).toBe(200);
  });

  it('/metrics answers 401 to anything but the metrics or admin token', async () => {
    const route = routes.find((r) => r.url === '/metrics')!;
    for (const [label, headers, query] of intruders()) {
      const response = await send(route, headers, query);
      expectGatewayError(response, 401, 'Unauthorized', `/metrics with ${label}`);
    }
    expect((await send(route, { authorization: `Bearer ${METRICS_TOKEN}` })).statusCode).toBe(200);
    expect((await send(route, { authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode).toBe(200);
  });

  it('the dashboard and console (operator session): pages send the browser to the login, everything else is a 401 gateway body', async () => {
    const credentials = [...intruders(), ['the admin token as a bearer (the pages take a session only)', { authorization: `Bearer ${ADMIN_TOKEN}` }] as [string, Record<string, string>]];
    for (const route of routes.filter((r) => guardOf(r) === 'session')) {
      for (const [label, headers, query] of credentials) {
        const response = await send(route, headers, query);
        const context = `${route.method} ${route.url} with ${label}`;
        const page = route.method === 'GET' && !route.url.startsWith('/admin/queues/api/');
        if (page) {
          expect(response.statusCode, context).toBe(302);
          expect(String(response.headers.location), context).toMatch(/^\/admin\/login\?next=/);
          expect(response.body, context).toBe('');
        } else {
          expectGatewayError(response, 401, 'Unauthorized', context);
        }
      }
    }
  });

  it('the operator API document and its page (admin token or session): pages send a browser without a token to the login, the rest is a 401', async () => {
    const docs = routes.filter((r) => guardOf(r) === 'operator-docs');
    expect(docs.map((r) => r.url)).toEqual(expect.arrayContaining(['/admin/openapi.json', '/admin/docs', '/admin/docs/json']));
    for (const route of docs) {
      for (const [label, headers, query] of intruders()) {
        const response = await send(route, headers, query);
        const context = `${route.method} ${route.url} with ${label}`;
        const presentsBearer = /^Bearer\s+\S/i.test(headers.authorization ?? '');
        const page = route.method === 'GET' && route.url.startsWith('/admin/docs') && !/\/(json|yaml)$/.test(route.url);
        if (page && !presentsBearer) {
          expect(response.statusCode, context).toBe(302);
          expect(String(response.headers.location), context).toMatch(/^\/admin\/login\?next=/);
        } else {
          expectGatewayError(response, 401, 'Unauthorized', context);
          expect(response.headers['www-authenticate'], context).toBe('Bearer realm="admin"');
        }
      }
    }
    expect((await send(docs.find((r) => r.url === '/admin/openapi.json')!, { authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode).toBe(200);
  });

  it('customer routes refuse operator and scanner tokens: only the apikey header counts', async () => {
    for (const route of routes.filter((r) => guardOf(r) === 'apikey')) {
      for (const token of [ADMIN_TOKEN, INGEST_TOKEN, METRICS_TOKEN]) {
        expectGatewayError(await send(route, { authorization: `Bearer ${token}` }), 401, 'No API key found in request', `${route.method} ${route.url}`);
        expectGatewayError(await send(route, { apikey: token }), 401, 'Unauthorized', `${route.method} ${route.url}`);
      }
      expectGatewayError(await send(route, {}, `?apikey=${org.key}`), 401, 'No API key found in request', `${route.method} ${route.url} key in the query`);
      expectGatewayError(await send(route, { authorization: `Bearer ${org.key}` }), 401, 'No API key found in request', `${route.method} ${route.url} key as a bearer`);
    }
  });

  it('ingest refuses everything but an ingest token', async () => {
    for (const route of routes.filter((r) => guardOf(r) === 'ingest')) {
      const others = intruders().filter(([label]) => label !== 'the ingest token');
      for (const [label, headers, query] of [...others, ['the admin token', { authorization: `Bearer ${ADMIN_TOKEN}` }], ['the metrics token', { authorization: `Bearer ${METRICS_TOKEN}` }]] as Array<[string, Record<string, string>, string?]>) {
        expectGatewayError(await send(route, headers, query), 401, 'Unauthorized', `${route.method} ${route.url} with ${label}`);
      }
    }
  });

  async function login(): Promise<string> {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${encodeURIComponent(ADMIN_TOKEN)}`,
    });
    expect(response.statusCode).toBe(303);
    return String(response.headers['set-cookie']).split(';')[0]!;
  }

  it('the login refuses the other tokens and keys, and does not open a session for them', async () => {
    for (const token of [org.key, INGEST_TOKEN, METRICS_TOKEN, `${ADMIN_TOKEN} `, ADMIN_TOKEN.toUpperCase(), '']) {
      requests++;
      const response: LightMyRequestResponse = await t.app.inject({
        method: 'POST',
        url: '/admin/login',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `token=${encodeURIComponent(token)}`,
      });
      expect(response.statusCode, token).toBe(401);
      expect(response.headers['set-cookie'], token).toBeUndefined();
    }
  });
});
