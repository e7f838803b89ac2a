import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';

const RULES = '/v1/platform/notification-rules';
const PROBE = '/v1/lookup/quota-probe';

describe('per-key rate limits and monthly quota, kept in Redis (decisions §1, §2)', () => {
  let t: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    const probe = (app: TestApp['app']) => {
      app.get(PROBE, { config: { auth: 'apikey', group: 'lookup', quota: true } }, async () => ({ ok: true }));
    };
    t = await startTestApp({}, { beforeReady: probe });
    // A second instance on the same database, Redis and key prefix, as behind a load balancer.
    second = await startTestApp({ QUEUE_PREFIX: t.deps.config.queuePrefix }, { beforeReady: probe, db: t.db });
  });
  afterAll(async () => {
    await second.close();
    await t.close();
  });

  it('answers 429 "API rate limit exceeded" past the per-second limit, with Retry-After and RateLimit headers', async () => {
    const org = await t.createOrg({ plan: { rate_limit_per_second: 3, rate_limit_per_minute: 1000 } });
    const responses = [];
    for (let i = 0; i < 5; i++) responses.push(await t.api(org.key, 'GET', RULES));
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses).toContain(429);
    const ok = responses[0]!;
    expect(ok.headers['ratelimit-limit']).toBeDefined();
    expect(ok.headers['ratelimit-remaining']).toBeDefined();
    expect(ok.headers['ratelimit-reset']).toBeDefined();
    expect(ok.headers['ratelimit-policy']).toBe('3;w=1, 1000;w=60');
    const limited = responses.find((response) => response.statusCode === 429)!;
    expect(limited.json()).toEqual({ message: 'API rate limit exceeded', request_id: limited.headers['service-request-id'] });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
  });

  it('applies the per-minute limit too', async () => {
    const org = await t.createOrg({ plan: { rate_limit_per_second: 100, rate_limit_per_minute: 4 } });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await t.api(org.key, 'GET', RULES)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('counts per key, not per organization', async () => {
    const org = await t.createOrg({ plan: { rate_limit_per_second: 100, rate_limit_per_minute: 2 } });
    const other = (await t.admin('POST', `/admin/v1/organizations/${org.id}/api-keys`, { name: 'second' })).json().key as string;
    expect((await t.api(org.key, 'GET', RULES)).statusCode).toBe(200);
    expect((await t.api(org.key, 'GET', RULES)).statusCode).toBe(200);
    expect((await t.api(org.key, 'GET', RULES)).statusCode).toBe(429);
    expect((await t.api(other, 'GET', RULES)).statusCode).toBe(200);
  });

  it('shares the limit between two API instances: together they allow exactly the limit', async () => {
    const org = await t.createOrg({ plan: { rate_limit_per_second: 100, rate_limit_per_minute: 6 } });
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await (i % 2 ? second : t).api(org.key, 'GET', RULES)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429, 429]);
  });

  it('never overruns a limit across instances, even in a concurrent burst, and leases more tokens at a time for big limits', async () => {
    for (const limit of [10, 400]) {
      const org = await t.createOrg({ plan: { rate_limit_per_second: 100_000, rate_limit_per_minute: limit } });
      const burst = await Promise.all(Array.from({ length: limit * 3 }, (_, i) => (i % 2 ? second : t).api(org.key, 'GET', RULES)));
      // Both instances had more demand than the limit: every leased token was spent.
      expect(burst.filter((response) => response.statusCode === 200)).toHaveLength(limit);
      expect((await t.api(org.key, 'GET', RULES)).statusCode).toBe(429);
      expect((await second.api(org.key, 'GET', RULES)).statusCode).toBe(429);
    }
  });

  it('answers 429 "API quota exceeded" once the monthly quota is spent, on both instances', async () => {
    const org = await t.createOrg({ plan: { groups: ['platform', 'lookup'], monthly_quota: 3 } });
    const first = await t.api(org.key, 'GET', PROBE);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-ratelimit-limit-month']).toBe('3');
    expect(first.headers['x-ratelimit-remaining-month']).toBe('2');
    expect((await second.api(org.key, 'GET', PROBE)).statusCode).toBe(200);
    expect((await t.api(org.key, 'GET', PROBE)).statusCode).toBe(200);
    const spent = await second.api(org.key, 'GET', PROBE);
    expect(spent.statusCode).toBe(429);
    expect(spent.json()).toEqual({ message: 'API quota exceeded', request_id: spent.headers['service-request-id'] });
    expect(Number(spent.headers['retry-after'])).toBeGreaterThan(0);
    // Platform calls do not count against the lookup quota.
    expect((await t.api(org.key, 'GET', RULES)).statusCode).toBe(200);
  });

  it('spends the monthly quota only on requests the rate limits let through', async () => {
    const org = await t.createOrg({ plan: { groups: ['platform', 'lookup'], rate_limit_per_second: 1, rate_limit_per_minute: 1000, monthly_quota: 5 } });
    const burst = [];
    for (let i = 0; i < 10; i++) burst.push(await t.api(org.key, 'GET', PROBE));
    const served = burst.filter((response) => response.statusCode === 200);
    // One a second: ten requests serve one, or a few when a busy machine spreads them over seconds.
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(served.length).toBeLessThan(10);
    for (const refused of burst.filter((response) => response.statusCode !== 200)) {
      expect(refused.statusCode).toBe(429);
      expect(refused.json().message).toBe('API rate limit exceeded');
    }
    expect(served[0]!.headers['x-ratelimit-remaining-month']).toBe('4');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const next = await t.api(org.key, 'GET', PROBE);
    expect(next.statusCode, next.body).toBe(200);
    expect(next.headers['x-ratelimit-remaining-month']).toBe(String(5 - served.length - 1));
  });

  it('does not count requests that fail authentication', async () => {
    const org = await t.createOrg({ plan: { rate_limit_per_second: 100, rate_limit_per_minute: 2 } });
    for (let i = 0; i < 5; i++) await t.api('B'.repeat(32), 'GET', RULES);
    expect((await t.api(org.key, 'GET', RULES)).statusCode).toBe(200);
  });
});
