import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { UnrecoverableError, Worker } from 'bullmq';
import type { LightMyRequestResponse } from 'fastify';
import { allQueueNames, jobIds, queueKeyPrefix, QUEUE_NAMES } from '@notify/queues';
import { ADMIN_TOKEN, startTestApp, type TestApp, type TestOrg } from '../support/app';
import { REDIS_URL } from '../support/database';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const CONSOLE = { 'x-requested-with': 'notify-console' };

function login(t: TestApp, token: string, next?: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  const body = new URLSearchParams({ token, ...(next !== undefined && { next }) }).toString();
  return t.app.inject({ method: 'POST', url: '/admin/login', payload: body, headers: { ...FORM, ...headers } });
}

/** The `name=value` of the session cookie a response set. */
function sessionCookie(response: LightMyRequestResponse): string {
  const header = response.headers['set-cookie'];
  const line = (Array.isArray(header) ? header : [header]).find((value) => value?.startsWith('notify_admin_session='));
  if (!line) throw new Error(`no session cookie in ${JSON.stringify(response.headers)}`);
  return line.split(';')[0]!;
}

function expectLoginRedirect(response: LightMyRequestResponse, next: string) {
  expect(response.statusCode, response.body).toBe(302);
  expect(response.headers.location).toBe(`/admin/login?next=${encodeURIComponent(next)}`);
}

describe('operator browser sessions: login, queue dashboard, console', () => {
  let t: TestApp;
  let other: TestApp;
  let org: TestOrg;
  let cookie: string;

  beforeAll(async () => {
    t = await startTestApp();
    // Another deployment, another token: its sessions mean nothing here.
    other = await startTestApp({ ADMIN_TOKEN: 'another-admin-token-9876543210-abcdef', AUTH_FAILURES_PER_ADDRESS: '20' }, { db: t.db });
    org = await t.createOrg({ memberCount: 1 });
    cookie = sessionCookie(await login(t, ADMIN_TOKEN));
  });
  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  it('sends an anonymous browser from the dashboard and the console to the login, and refuses their data', async () => {
    for (const url of ['/admin/queues', '/admin/queues/', '/admin/queues/queue/mail', '/admin/queues/static/js/main.js', '/admin/console', '/admin/console/console.js']) {
      expectLoginRedirect(await t.app.inject({ url }), url);
    }
    const api = await t.app.inject({ url: '/admin/queues/api/queues' });
    expect(api.statusCode).toBe(401);
    expect(api.json()).toEqual({ message: 'Unauthorized', request_id: api.headers['service-request-id'] });
    expect((await t.app.inject({ method: 'PUT', url: `/admin/queues/api/queues/${QUEUE_NAMES.send}/retry/failed` })).statusCode).toBe(401);
    expect((await t.app.inject({ url: '/admin' })).headers.location).toBe('/admin/console');
  });

  it('shows a login form, and refuses a wrong or missing token without a cookie', async () => {
    const page = await t.app.inject({ url: '/admin/login?next=%2Fadmin%2Fqueues' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<input id="token" name="token" type="password"');
    expect(page.body).toContain('name="next" value="/admin/queues"');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['cache-control']).toBe('no-store');

    for (const token of ['wrong-token', '', `${ADMIN_TOKEN}x`, ADMIN_TOKEN.slice(0, -1)]) {
      const refused = await login(t, token);
      expect(refused.statusCode, token).toBe(401);
      expect(refused.headers['set-cookie']).toBeUndefined();
      expect(refused.body).toContain('That token is not right.');
    }
    const noToken = await t.app.inject({ method: 'POST', url: '/admin/login', payload: 'next=%2Fadmin', headers: FORM });
    expect(noToken.statusCode).toBe(401);
    // Bearer tokens open the API, not the browser pages.
    expectLoginRedirect(await t.app.inject({ url: '/admin/queues', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }), '/admin/queues');
  });

  it('answers the right token with a signed, HttpOnly, SameSite=Strict session cookie for /admin, and goes where it was asked', async () => {
    const response = await login(t, ADMIN_TOKEN, '/admin/queues/queue/mail');
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/admin/queues/queue/mail');
    const header = String(response.headers['set-cookie']);
    expect(header).toMatch(/^notify_admin_session=[A-Za-z0-9_-]{24}\.\d{13}\.[A-Za-z0-9+/]+;/);
    expect(header).toContain('HttpOnly');
    expect(header).toContain('SameSite=Strict');
    expect(header).toContain('Path=/admin');
    expect(header).toContain('Max-Age=28800');
    expect(header).not.toContain(ADMIN_TOKEN);
    // Only paths of this service under /admin are followed.
    for (const next of ['//evil.example/admin', 'https://evil.example/admin', '/v1/platform/notification-rules', '/admin\\@evil.example', '/admin/login']) {
      expect((await login(t, ADMIN_TOKEN, next)).headers.location, next).toBe('/admin/console');
    }
    // A logged-in browser skips the form.
    expect((await t.app.inject({ url: '/admin/login?next=%2Fadmin%2Fqueues', headers: { cookie } })).headers.location).toBe('/admin/queues');
  });

  it('refuses a login form posted from another site', async () => {
    const crossSite = await login(t, ADMIN_TOKEN, undefined, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(crossSite.statusCode).toBe(403);
    expect(crossSite.headers['set-cookie']).toBeUndefined();
  });

  it('answers 429 after 20 wrong tokens from one address, even to the right token', async () => {
    const token = 'another-admin-token-9876543210-abcdef';
    for (let i = 0; i < 20; i++) expect((await login(other, 'guess')).statusCode).toBe(401);
    const blocked = await login(other, token);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.headers['retry-after']).toBe('60');
    expect(blocked.headers['set-cookie']).toBeUndefined();
    // Another address is not held back.
    const elsewhere = await other.app.inject({ method: 'POST', url: '/admin/login', payload: `token=${token}`, headers: FORM, remoteAddress: '10.1.2.3' });
    expect(elsewhere.statusCode).toBe(303);
  });

  it('marks the cookie Secure when PUBLIC_URL is https, though TLS ends at a proxy and the request came over HTTP', async () => {
    // Without PUBLIC_URL, and with an http one, a plain-HTTP login gets a cookie without Secure (development).
    expect(String((await login(t, ADMIN_TOKEN)).headers['set-cookie'])).not.toMatch(/;\s*Secure/i);
    const plain = await startTestApp({ PUBLIC_URL: 'http://notify.internal:3000' }, { db: t.db });
    const behindProxy = await startTestApp({ PUBLIC_URL: 'https://notify.example.com' }, { db: t.db });
    try {
      expect(String((await login(plain, ADMIN_TOKEN)).headers['set-cookie'])).not.toMatch(/;\s*Secure/i);
      const response = await login(behindProxy, ADMIN_TOKEN);
      expect(response.statusCode).toBe(303);
      expect(String(response.headers['set-cookie'])).toMatch(/;\s*Secure(;|$)/);
      const logout = await behindProxy.app.inject({ method: 'POST', url: '/admin/logout', payload: '', headers: { cookie: sessionCookie(response), ...FORM } });
      expect(String(logout.headers['set-cookie'])).toMatch(/;\s*Secure(;|$)/);
    } finally {
      await Promise.all([plain.close(), behindProxy.close()]);
    }
  });

  it('lets nobody log in when ADMIN_TOKEN is not set', async () => {
    const closed = await startTestApp({ ADMIN_TOKEN: '' }, { db: t.db });
    try {
      for (const token of ['', 'anything', ADMIN_TOKEN]) expect((await login(closed, token)).statusCode).toBe(503);
      expectLoginRedirect(await closed.app.inject({ url: '/admin/queues' }), '/admin/queues');
      expectLoginRedirect(await closed.app.inject({ url: '/admin/console', headers: { cookie } }), '/admin/console');
      expect((await closed.app.inject({ url: '/admin/v1/organizations', headers: { cookie, ...CONSOLE } })).statusCode).toBe(401);
    } finally {
      await closed.close();
    }
  });

  it('serves the queue dashboard with its own assets (no outside stylesheet) and every queue', async () => {
    const page = await t.app.inject({ url: '/admin/queues', headers: { cookie } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<base href="/admin/queues/" />');
    expect(page.body).not.toContain('googleapis');
    const assets = [...page.body.matchAll(/(?:src|href)="(static\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThan(2);
    for (const asset of assets) {
      const response = await t.app.inject({ url: `/admin/queues/${asset}`, headers: { cookie } });
      expect(response.statusCode, asset).toBe(200);
    }
    const queues = await t.app.inject({ url: '/admin/queues/api/queues', headers: { cookie } });
    expect(queues.statusCode).toBe(200);
    const names = (queues.json().queues as Array<{ name: string }>).map((queue) => queue.name);
    expect(names.sort()).toEqual(allQueueNames().sort());
    expect(names).toHaveLength(23);
    expect(names).toEqual(expect.arrayContaining(['match.new_open_port_detected', 'deliver', 'send']));
  });

  it('serves the console page and its script to a session', async () => {
    const page = await t.app.inject({ url: '/admin/console', headers: { cookie } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<script type="module" src="/admin/console/console.js"></script>');
    const script = await t.app.inject({ url: '/admin/console/console.js', headers: { cookie } });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.body).toContain("'x-requested-with': 'notify-console'");
    expect((await t.app.inject({ url: '/admin/assets/console.css' })).statusCode).toBe(200);
  });

  it('lets the console call the operator API with the session cookie and its header', async () => {
    const list = await t.app.inject({ url: '/admin/v1/organizations', headers: { cookie, ...CONSOLE } });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json()).toEqual(expect.arrayContaining([expect.objectContaining({ id: org.id })]));
    const created = await t.app.inject({ method: 'POST', url: `/admin/v1/organizations/${org.id}/api-keys`, payload: { name: 'from the console' }, headers: { cookie, ...CONSOLE } });
    expect(created.statusCode, created.body).toBe(201);
  });

  it('refuses a cookie-authenticated API call without the CSRF header, and changes nothing', async () => {
    const before = (await t.admin('GET', `/admin/v1/organizations/${org.id}/api-keys`)).json().length;
    const attempts = [
      t.app.inject({ method: 'POST', url: `/admin/v1/organizations/${org.id}/api-keys`, payload: { name: 'forged' }, headers: { cookie } }),
      t.app.inject({ method: 'POST', url: `/admin/v1/organizations/${org.id}/api-keys`, payload: { name: 'forged' }, headers: { cookie, 'x-requested-with': 'XMLHttpRequest' } }),
      t.app.inject({ method: 'DELETE', url: `/admin/v1/organizations/${org.id}/api-keys/${org.keyId}`, headers: { cookie } }),
      t.app.inject({ url: '/admin/v1/organizations', headers: { cookie } }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.statusCode, response.body).toBe(401);
      expect(response.json()).toEqual({ message: 'Unauthorized', request_id: response.headers['service-request-id'] });
    }
    expect((await t.admin('GET', `/admin/v1/organizations/${org.id}/api-keys`)).json()).toHaveLength(before);
    // The header alone is nothing.
    expect((await t.app.inject({ url: '/admin/v1/organizations', headers: CONSOLE })).statusCode).toBe(401);
  });

  it('refuses state changes on the dashboard that another site sends with the cookie', async () => {
    const forged = await t.app.inject({
      method: 'PUT',
      url: `/admin/queues/api/queues/${QUEUE_NAMES.send}/pause`,
      headers: { cookie, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(forged.statusCode).toBe(403);
    expect(forged.json()).toEqual({ message: 'Forbidden', request_id: forged.headers['service-request-id'] });
    const logout = await t.app.inject({ method: 'POST', url: '/admin/logout', headers: { cookie, origin: 'https://evil.example' } });
    expect(logout.statusCode).toBe(403);
    expect(logout.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(logout.json()).toEqual({ message: 'Forbidden', request_id: logout.headers['service-request-id'] });
    expect((await t.app.inject({ url: '/admin/console', headers: { cookie } })).statusCode).toBe(200);
  });

  it('refuses forged, tampered, expired and foreign session cookies', async () => {
    const [name, value] = cookie.split('=') as [string, string];
    const [id, expiry, signature] = value.split('.') as [string, string, string];
    const later = String(Number(expiry) + 3600_000);
    // The id's last character changed, whatever it was.
    const tamperedId = `${id.slice(0, -1)}${id.endsWith('B') ? 'C' : 'B'}`;
    const forged = [
      `${name}=${id}.${expiry}`,
      `${name}=${id}.${later}.${signature}`,
      `${name}=${tamperedId}.${expiry}.${signature}`,
      `${name}=${t.app.signCookie(`${id}.${Date.now() - 1000}`)}`,
      `${name}=${t.app.signCookie('anything')}`,
      `${name}=${other.app.signCookie(`${id}.${later}`)}`,
    ];
    for (const bad of forged) {
      expectLoginRedirect(await t.app.inject({ url: '/admin/console', headers: { cookie: bad } }), '/admin/console');
      expect((await t.app.inject({ url: '/admin/v1/organizations', headers: { cookie: bad, ...CONSOLE } })).statusCode, bad).toBe(401);
    }
    // And this deployment's cookie means nothing to the other one.
    expectLoginRedirect(await other.app.inject({ url: '/admin/console', headers: { cookie } }), '/admin/console');
  });

  it('ends the session at logout: the cookie is cleared and no longer works anywhere', async () => {
    const own = sessionCookie(await login(t, ADMIN_TOKEN));
    expect((await t.app.inject({ url: '/admin/console', headers: { cookie: own } })).statusCode).toBe(200);
    const logout = await t.app.inject({ method: 'POST', url: '/admin/logout', payload: '', headers: { cookie: own, ...FORM } });
    expect(logout.statusCode).toBe(303);
    expect(logout.headers.location).toBe('/admin/login');
    expect(String(logout.headers['set-cookie'])).toMatch(/^notify_admin_session=;.*Expires=Thu, 01 Jan 1970/);
    expectLoginRedirect(await t.app.inject({ url: '/admin/console', headers: { cookie: own } }), '/admin/console');
    expect((await t.app.inject({ url: '/admin/queues/api/queues', headers: { cookie: own } })).statusCode).toBe(401);
    expect((await t.app.inject({ url: '/admin/v1/organizations', headers: { cookie: own, ...CONSOLE } })).statusCode).toBe(401);
    // Other sessions go on.
    expect((await t.app.inject({ url: '/admin/console', headers: { cookie } })).statusCode).toBe(200);
  });

  it('lists an organization\'s rules for operators, with delivery counts per status', async () => {
    const member = org.members[0]!.team_member_uuid;
    const rule = (await t.api(org.key, 'POST', '/v1/platform/notification-rules', { name: 'Ports', scope: 'new_open_port_detected', members: [member] })).json();
    await t.db.pool.query(
      `INSERT INTO deliveries (id, rule_id, team_member_id, email, period_key, status, event_count, attempts, last_error)
       VALUES (gen_random_uuid(), $1, $2, 'a@example.com', 'p1', 'failed', 1, 3, '550 No such user'), (gen_random_uuid(), $1, $2, 'a@example.com', 'p2', 'sent', 2, 1, NULL)`,
      [rule.id, member],
    );
    const list = await t.admin('GET', `/admin/v1/organizations/${org.id}/notification-rules?ordering=name`);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json()).toEqual({
      result_count: 1,
      results: [expect.objectContaining({ id: rule.id, name: 'Ports', scope: 'new_open_port_detected', enabled: true, deliveries: { pending: 0, sending: 0, sent: 1, failed: 1, cancelled: 0 } })],
    });
    expect((await t.admin('GET', `/admin/v1/organizations/00000000-0000-4000-8000-000000000000/notification-rules`)).statusCode).toBe(404);
    const bad = await t.admin('GET', `/admin/v1/organizations/${org.id}/notification-rules?ordering=nope`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().parameters[0].param).toBe('ordering');
    expect((await t.app.inject({ url: `/admin/v1/organizations/${org.id}/notification-rules` })).statusCode).toBe(401);
  });

  it('retrying a failed mail job on the dashboard reopens its delivery for the mailer', async () => {
    const member = org.members[0]!.team_member_uuid;
    const rule = (await t.api(org.key, 'POST', '/v1/platform/notification-rules', { name: 'Retry me', scope: 'asset_ssl_changed', members: [member] })).json();
    const { rows } = await t.db.pool.query<{ id: string }>(
      `INSERT INTO deliveries (id, rule_id, team_member_id, email, period_key, status, event_count, attempts, last_error)
       VALUES (gen_random_uuid(), $1, $2, 'b@example.com', 'p1', 'failed', 1, 1, '550 No such user') RETURNING id`,
      [rule.id, member],
    );
    const deliveryId = rows[0]!.id;
    // A mailer that fails the job for good, as a 550 does.
    await t.deps.queues.requestSend([deliveryId]);
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const failed = new Promise<void>((resolve) => {
      const worker = new Worker(QUEUE_NAMES.send, async () => {
        throw new UnrecoverableError('550 No such user');
      }, { connection, prefix: queueKeyPrefix(t.deps.config.queuePrefix, QUEUE_NAMES.send) });
      worker.on('failed', () => void worker.close().then(() => resolve()));
    });
    await failed;
    connection.disconnect();
    const jobId = jobIds.send({ deliveryIds: [deliveryId] });

    const listed = await t.app.inject({ url: `/admin/queues/api/queues?activeQueue=${QUEUE_NAMES.send}&status=failed&page=1&jobsPerPage=10`, headers: { cookie } });
    const mailQueue = (listed.json().queues as Array<{ name: string; jobs: Array<{ id: string; failedReason: string }> }>).find((queue) => queue.name === QUEUE_NAMES.send)!;
    expect(mailQueue.jobs).toEqual([expect.objectContaining({ id: jobId, failedReason: '550 No such user' })]);

    const retried = await t.app.inject({ method: 'PUT', url: `/admin/queues/api/queues/${QUEUE_NAMES.send}/${jobId}/retry`, headers: { cookie } });
    expect(retried.statusCode, retried.body).toBeLessThan(300);
    const after = await t.db.pool.query('SELECT status, last_error FROM deliveries WHERE id = $1', [deliveryId]);
    expect(after.rows[0]).toEqual({ status: 'pending', last_error: null });
    expect(await (await t.deps.queues.send.getJob(jobId))!.getState()).toBe('waiting');
  });
});
