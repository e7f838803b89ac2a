/**
 * Rate limits and the monthly quota hold in total across two API instances that share Redis, under
 * concurrent requests split between them (as behind a load balancer): instances lease tokens of each
 * window from Redis, never past the limit, and the quota leases one token per call.
 */
import { Redis } from 'ioredis';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import { REDIS_URL } from '../support/database';
import { expectGatewayError } from './abuse-support';
import { redisKeys } from '@notify/queues';

const RULES = '/v1/platform/notification-rules';
const WHOIS = '/v1/lookup/whois?domain=example.com';

/** Two instances on one database, Redis and key prefix. */
async function pair(env: Record<string, string>): Promise<[TestApp, TestApp]> {
  // A WHOIS server nobody answers at: every lookup must come from the cache seeded below.
  const first = await startTestApp({ WHOIS_SERVER: '127.0.0.1:9', ...env });
  const second = await startTestApp({ WHOIS_SERVER: '127.0.0.1:9', ...env, QUEUE_PREFIX: first.deps.config.queuePrefix }, { db: first.db });
  const redis = new Redis(REDIS_URL);
  await redis.set(redisKeys(first.deps.config.queuePrefix).whois('example.com'), JSON.stringify({ domain_name: 'example.com', raw: 'cached', parsed: null, check_date: new Date().toISOString() }), 'EX', 600);
  redis.disconnect();
  return [first, second];
}

describe('limits across two API instances sharing Redis (faults)', () => {
  let exact: [TestApp, TestApp];
  let requests = 0;

  beforeAll(async () => {
    exact = await pair({});
  });
  afterAll(async () => {
    for (const t of [...exact].reverse()) await t.close();
    console.info(`abuse-rate-limit: ${requests} requests`);
  });

  /** `count` requests at once, alternating between the instances; how long the burst took. */
  async function burst(apps: [TestApp, TestApp], key: string, url: string, count: number) {
    requests += count;
    const started = Date.now();
    const responses = await Promise.all(Array.from({ length: count }, (_, i) => apps[i % 2]!.api(key, 'GET', url)));
    return { responses, elapsed: Date.now() - started, ok: responses.filter((r) => r.statusCode === 200).length };
  }

  function expectRefusals(responses: LightMyRequestResponse[], message: string) {
    for (const response of responses.filter((r) => r.statusCode !== 200)) {
      expectGatewayError(response, 429, message);
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
  }

  it('the monthly quota is never overrun: 300 concurrent lookups, quota 40', async () => {
    const apps = () => exact;
    const [a] = apps();
    const org = await a.createOrg({ plan: { groups: ['platform', 'lookup'], monthly_quota: 40, rate_limit_per_second: 100_000, rate_limit_per_minute: 1_000_000 } });
    const { responses, ok } = await burst(apps(), org.key, WHOIS, 300);
    expect(ok).toBe(40);
    expectRefusals(responses, 'API quota exceeded');
    // Later calls, on either instance, are refused too; customer rule calls do not count against it.
    for (const t of apps()) {
      expectGatewayError(await t.api(org.key, 'GET', WHOIS), 429, 'API quota exceeded');
      expect((await t.api(org.key, 'GET', RULES)).statusCode).toBe(200);
    }
    // A second key of the organization has a quota of its own (per key, decisions §2).
    const other = (await a.admin('POST', `/admin/v1/organizations/${org.id}/api-keys`, { name: 'other' })).json().key as string;
    expect((await burst(apps(), other, WHOIS, 60)).ok).toBe(40);
  });

  it('the per-second limit holds in total: 200 concurrent requests, limit 15', async () => {
    const [a] = exact;
    for (let round = 0; round < 3; round++) {
      const org = await a.createOrg({ plan: { rate_limit_per_second: 15, rate_limit_per_minute: 100_000 } });
      const { responses, ok, elapsed } = await burst(exact, org.key, RULES, 200);
      // A fixed window of one second opens with the first request: a burst that took longer may span two.
      const windows = elapsed < 1000 ? 1 : Math.ceil(elapsed / 1000) + 1;
      expect(ok, `round ${round}: ${ok} allowed in ${elapsed} ms`).toBeLessThanOrEqual(15 * windows);
      expect(ok).toBeGreaterThanOrEqual(1);
      expectRefusals(responses, 'API rate limit exceeded');
    }
  });

  it('the per-minute limit holds in total: 150 concurrent requests, limit 25', async () => {
    const [a] = exact;
    const org = await a.createOrg({ plan: { rate_limit_per_second: 100_000, rate_limit_per_minute: 25 } });
    const { responses, ok } = await burst(exact, org.key, RULES, 150);
    expect(ok).toBe(25);
    expectRefusals(responses, 'API rate limit exceeded');
  });

  it('a big limit (leases of many tokens at once) holds exactly too: 3,000 concurrent requests, limit 1,000', async () => {
    const [a, b] = exact;
    const org = await a.createOrg({ plan: { rate_limit_per_second: 100_000, rate_limit_per_minute: 1000 } });
    const { responses, ok } = await burst(exact, org.key, RULES, 3000);
    expect(ok).toBe(1000);
    expectRefusals(responses, 'API rate limit exceeded');
    for (const t of [a, b]) expectGatewayError(await t.api(org.key, 'GET', RULES), 429, 'API rate limit exceeded');
  });

  it('refused keys cost nothing: a burst of bad keys on both instances leaves a good key its full limit', async () => {
    const [a] = exact;
    const org = await a.createOrg({ plan: { rate_limit_per_second: 100_000, rate_limit_per_minute: 10 } });
    const bad = await burst(exact, 'Q'.repeat(32), RULES, 100);
    expect(bad.ok).toBe(0);
    for (const response of bad.responses) expectGatewayError(response, 401, 'Unauthorized');
    expect((await burst(exact, org.key, RULES, 30)).ok).toBe(10);
  });
});
