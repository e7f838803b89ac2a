/**
 * Failed authentication costs the one who fails (issue 15, item 5): per client address and in total,
 * across instances through Redis, a 429 before any database lookup once over budget; parallel tries
 * never exceed it; X-Forwarded-For counts only from named proxies, so a client cannot rotate its address.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '@notify/db';
import { AuthThrottle, clientKey } from '../../apps/api/src/plugins/auth-throttle';
import { ADMIN_TOKEN, INGEST_TOKEN, startTestApp, type TestApp, type TestOrg } from '../support/app';
import { REDIS_URL } from '../support/database';

const METRICS_TOKEN = 'test-metrics-token-throttle-0123456789';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const BUDGET = 5;

/** A well-formed key (32 alphanumerics) that no organization has. */
const unknownKey = () => randomBytes(24).toString('base64').replace(/[^A-Za-z0-9]/g, 'x').slice(0, 32);

function expectThrottled(response: { statusCode: number; headers: Record<string, unknown>; json(): unknown }, context: string): void {
  expect(response.statusCode, context).toBe(429);
  expect(response.json(), context).toEqual({ message: 'Too many failed authentication attempts', request_id: expect.any(String) });
  expect(Number(response.headers['retry-after']), context).toBeGreaterThanOrEqual(1);
}

/** Counts the database connections checked out (one per query of the key lookup) while `work` runs. */
async function countingQueries<T>(t: TestApp, work: () => Promise<T>): Promise<{ result: T; queries: number }> {
  let queries = 0;
  const count = () => queries++;
  t.deps.db.pool.on('acquire', count);
  try {
    return { result: await work(), queries };
  } finally {
    t.deps.db.pool.off('acquire', count);
  }
}

describe('failed authentication is throttled per client address', () => {
  let t: TestApp;
  let org: TestOrg;
  let n = 0;
  /** A fresh client address per test, so tests do not spend each other's budget. */
  const address = () => `198.51.100.${++n}`;

  beforeAll(async () => {
    t = await startTestApp({ METRICS_TOKEN, AUTH_FAILURES_PER_ADDRESS: String(BUDGET), AUTH_FAILURES_TOTAL: '100000' });
    org = await t.createOrg();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('parallel wrong logins never exceed the budget, and then even the right token is refused', async () => {
    const remoteAddress = address();
    const tries = await Promise.all(
      Array.from({ length: 60 }, () => t.app.inject({ method: 'POST', url: '/admin/login', headers: FORM, payload: 'token=wrong-guess', remoteAddress })),
    );
    const statuses = tries.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 401).length).toBe(BUDGET);
    expect(statuses.filter((status) => status === 429).length).toBe(60 - BUDGET);
    const right = await t.app.inject({ method: 'POST', url: '/admin/login', headers: FORM, payload: `token=${encodeURIComponent(ADMIN_TOKEN)}`, remoteAddress });
    expect(right.statusCode).toBe(429);
    expect(right.headers['set-cookie']).toBeUndefined();
    // A right login gives its try back: an operator who logs in often is never held back.
    const operator = address();
    for (let i = 0; i < BUDGET * 3; i++) {
      const login = await t.app.inject({ method: 'POST', url: '/admin/login', headers: FORM, payload: `token=${encodeURIComponent(ADMIN_TOKEN)}`, remoteAddress: operator });
      expect(login.statusCode).toBe(303);
    }
  });

  it('a flood of distinct unknown keys stops reaching the database after the budget', async () => {
    const remoteAddress = address();
    const { result: responses, queries } = await countingQueries(t, async () => {
      const answers = [];
      for (let i = 0; i < 1000; i++) {
        answers.push(await t.app.inject({ method: 'GET', url: '/v1/platform/notification-rules', headers: { apikey: unknownKey() }, remoteAddress }));
      }
      return answers;
    });
    expect(responses.slice(0, BUDGET).map((r) => r.statusCode)).toEqual(Array(BUDGET).fill(401));
    for (const response of responses.slice(BUDGET)) expectThrottled(response, 'past the budget');
    // One lookup per key within the budget, none after it.
    expect(queries).toBeLessThanOrEqual(BUDGET);
    console.info(`auth-throttle: 1,000 distinct unknown keys from one address cost ${queries} database queries (budget ${BUDGET})`);
    // The organization's own key still works from another address.
    expect((await t.app.inject({ method: 'GET', url: '/v1/platform/notification-rules', headers: { apikey: org.key }, remoteAddress: address() })).statusCode).toBe(200);
    // ... and is refused, unchecked, from the address over its budget.
    expectThrottled(await t.app.inject({ method: 'GET', url: '/v1/platform/notification-rules', headers: { apikey: org.key }, remoteAddress }), 'right key, blocked address');
  });

  it('malformed keys count as failures too', async () => {
    const remoteAddress = address();
    const statuses = [];
    for (let i = 0; i < BUDGET + 3; i++) statuses.push((await t.app.inject({ url: '/v1/platform/notification-rules', headers: { apikey: `bad-${i}` }, remoteAddress })).statusCode);
    expect(statuses).toEqual([...Array(BUDGET).fill(401), 429, 429, 429]);
  });

  it.each([
    ['the operator API', 'GET', '/admin/v1/organizations', ADMIN_TOKEN],
    ['ingest', 'POST', '/v1/ingest/events', INGEST_TOKEN],
    ['/metrics', 'GET', '/metrics', METRICS_TOKEN],
    ['readiness details', 'GET', '/health/ready', ADMIN_TOKEN],
    ['the operator API document', 'GET', '/admin/openapi.json', ADMIN_TOKEN],
  ] as const)('wrong bearer tokens on %s get 429 after the budget, then so does the right one', async (_label, method, url, right) => {
    const remoteAddress = address();
    const payload = method === 'POST' ? { events: [] } : undefined;
    const send = (token: string, from = remoteAddress) => t.app.inject({ method, url, payload, headers: { authorization: `Bearer ${token}` }, remoteAddress: from });
    for (let i = 0; i < BUDGET; i++) expect((await send(`wrong-token-${i}-0123456789abcdef0123456789`)).statusCode).toBe(401);
    expectThrottled(await send('wrong-token-once-more-0123456789abcdef'), url);
    expectThrottled(await send(right), `${url} with the right token from the blocked address`);
    expect((await send(right, address())).statusCode).not.toBe(401);
  });

  it('failures on one route spend the same budget as on another', async () => {
    const remoteAddress = address();
    for (let i = 0; i < BUDGET; i++) {
      const response = i % 2
        ? await t.app.inject({ url: '/admin/v1/organizations', headers: { authorization: 'Bearer wrong-0123456789abcdef0123456789' }, remoteAddress })
        : await t.app.inject({ url: '/v1/platform/notification-rules', headers: { apikey: unknownKey() }, remoteAddress });
      expect(response.statusCode).toBe(401);
    }
    expectThrottled(await t.app.inject({ url: '/metrics', headers: { authorization: 'Bearer x' }, remoteAddress }), 'metrics after failures elsewhere');
  });

  it('a request without any credential is a 401 that spends nothing', async () => {
    const remoteAddress = address();
    for (let i = 0; i < BUDGET * 3; i++) {
      expect((await t.app.inject({ url: '/admin/v1/organizations', remoteAddress })).statusCode).toBe(401);
      expect((await t.app.inject({ url: '/metrics', remoteAddress })).statusCode).toBe(401);
      expect((await t.app.inject({ url: '/v1/platform/notification-rules', remoteAddress })).statusCode).toBe(401);
    }
    expect((await t.app.inject({ url: '/admin/v1/organizations', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, remoteAddress })).statusCode).toBe(200);
  });

  it('without TRUST_PROXY, X-Forwarded-For is ignored: rotating it does not escape the throttle', async () => {
    const remoteAddress = address();
    const statuses = [];
    for (let i = 0; i < BUDGET + 5; i++) {
      const response = await t.app.inject({ url: '/admin/v1/organizations', headers: { authorization: 'Bearer wrong-0123456789abcdef0123456789', 'x-forwarded-for': `203.0.113.${i}` }, remoteAddress });
      statuses.push(response.statusCode);
    }
    expect(statuses).toEqual([...Array(BUDGET).fill(401), ...Array(5).fill(429)]);
  });
});

describe('behind a named proxy (TRUST_PROXY=<address>)', () => {
  let t: TestApp;
  const PROXY = '10.9.8.7';

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: `${PROXY},127.0.0.1`, AUTH_FAILURES_PER_ADDRESS: String(BUDGET), AUTH_FAILURES_TOTAL: '100000' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a client rotating the X-Forwarded-For it sends is still counted under the address the proxy saw', async () => {
    const statuses = [];
    for (let i = 0; i < BUDGET + 5; i++) {
      // The client wrote its own X-Forwarded-For; the proxy appended the address it saw.
      const response = await t.app.inject({
        url: '/admin/v1/organizations',
        headers: { authorization: 'Bearer wrong-0123456789abcdef0123456789', 'x-forwarded-for': `203.0.113.${i}, 192.0.2.77` },
        remoteAddress: PROXY,
      });
      statuses.push(response.statusCode);
    }
    expect(statuses).toEqual([...Array(BUDGET).fill(401), ...Array(5).fill(429)]);
    // Another client behind the same proxy has its own budget.
    const other = await t.app.inject({ url: '/admin/v1/organizations', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-forwarded-for': '192.0.2.78' }, remoteAddress: PROXY });
    expect(other.statusCode).toBe(200);
  });

  it('a client connecting directly (not through a named proxy) cannot pick its address with X-Forwarded-For', async () => {
    const statuses = [];
    for (let i = 0; i < BUDGET + 2; i++) {
      const response = await t.app.inject({ url: '/metrics', headers: { authorization: 'Bearer wrong', 'x-forwarded-for': `203.0.113.${i}` }, remoteAddress: '192.0.2.200' });
      statuses.push(response.statusCode);
    }
    expect(statuses).toEqual([...Array(BUDGET).fill(401), 429, 429]);
  });
});

describe('the budget in total and across instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    const shared = { QUEUE_PREFIX: `test-${randomBytes(4).toString('hex')}`, AUTH_FAILURES_PER_ADDRESS: '3', AUTH_FAILURES_TOTAL: '20' };
    a = await startTestApp(shared);
    b = await startTestApp(shared, { db: a.db });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('failures on one instance count on the other', async () => {
    const remoteAddress = '198.51.100.250';
    const wrong = (app: TestApp) => app.app.inject({ url: '/admin/v1/organizations', headers: { authorization: 'Bearer wrong' }, remoteAddress });
    expect((await wrong(a)).statusCode).toBe(401);
    expect((await wrong(a)).statusCode).toBe(401);
    expect((await wrong(b)).statusCode).toBe(401);
    // Instance a has not seen the third failure, b has: both refuse now (a learns it from Redis).
    expect((await wrong(b)).statusCode).toBe(429);
    expect((await wrong(a)).statusCode).toBe(429);
  });

  it('past the total budget, unknown keys from fresh addresses are refused without a lookup; known keys and right tokens still pass', async () => {
    const org = await a.createOrg();
    // The key is known (cached) before the flood.
    expect((await a.app.inject({ url: '/v1/platform/notification-rules', headers: { apikey: org.key }, remoteAddress: '192.0.2.1' })).statusCode).toBe(200);
    const { result: statuses, queries } = await countingQueries(a, async () => {
      const answers = [];
      // 200 addresses, 2 keys each: every address stays within its own budget of 3.
      for (let i = 0; i < 400; i++) {
        const response = await a.app.inject({ url: '/v1/platform/notification-rules', headers: { apikey: unknownKey() }, remoteAddress: `100.64.${i >> 8}.${(i >> 1) & 255}` });
        answers.push(response.statusCode);
      }
      return answers;
    });
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(20);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(380);
    expect(queries).toBeLessThanOrEqual(20);
    console.info(`auth-throttle: 400 unknown keys from 200 addresses cost ${queries} database queries (total budget 20)`);
    expect((await a.app.inject({ url: '/v1/platform/notification-rules', headers: { apikey: org.key }, remoteAddress: '192.0.2.1' })).statusCode).toBe(200);
    expect((await a.app.inject({ url: '/admin/v1/organizations', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, remoteAddress: '192.0.2.2' })).statusCode).toBe(200);
  });
});

describe('a database outage', () => {
  it('answers 503 to key lookups without spending the clients\' budget', async () => {
    // Nothing listens on port 1: every lookup fails to connect.
    const away = createDatabase({ url: 'postgresql://postgres@127.0.0.1:1/postgres', poolSize: 1 });
    const t = await startTestApp({ AUTH_FAILURES_PER_ADDRESS: '2' }, { db: { ...away, drop: () => away.close() } });
    try {
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await t.app.inject({ url: '/v1/platform/notification-rules', headers: { apikey: unknownKey() }, remoteAddress: '192.0.2.99' })).statusCode);
      expect(statuses).toEqual([503, 503, 503, 503, 503]);
    } finally {
      await t.close();
      await away.close();
    }
  });
});

describe('AuthThrottle without Redis', () => {
  let redis: Redis;
  afterEach(() => redis?.disconnect());

  it('counts locally when Redis is away, so the budget still holds', async () => {
    redis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    redis.on('error', () => {});
    const throttle = new AuthThrottle({ redis, prefix: 'offline', perAddress: 3, total: 1000, windowMs: 60_000 });
    const verdicts = [];
    for (let i = 0; i < 5; i++) verdicts.push((await throttle.reserve('192.0.2.9')).allowed);
    expect(verdicts).toEqual([true, true, true, false, false]);
    expect(throttle.refusal('192.0.2.9')).toMatchObject({ allowed: false });
    expect(throttle.refusal('192.0.2.10')).toBeUndefined();
  });

  it('uses the live Redis when there is one (sanity check of the same calls)', async () => {
    redis = new Redis(REDIS_URL);
    const throttle = new AuthThrottle({ redis, prefix: `test-${randomBytes(4).toString('hex')}`, perAddress: 2, total: 1000, windowMs: 60_000 });
    expect((await throttle.failed('192.0.2.9')).allowed).toBe(true);
    expect((await throttle.failed('192.0.2.9')).allowed).toBe(true);
    expect(throttle.refusal('192.0.2.9')).toMatchObject({ allowed: false, retryAfterSeconds: 60 });
  });
});

describe('clientKey', () => {
  it('counts IPv4 as is, IPv6 by its /64, IPv4-mapped IPv6 as IPv4', () => {
    expect(clientKey('192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
  });
});
