import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeasedRateLimitCounters } from './leased-rate-limit-store';
import { pause } from '../../../../test/support/wait';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Counts `count` requests of `key` on `counters`, all at once; how many were allowed. */
async function requests(counters: LeasedRateLimitCounters, key: string, count: number, max: number, timeWindow = 60_000): Promise<number> {
  const results = await Promise.all(
    Array.from({ length: count }, () => new Promise<{ current: number }>((resolve, reject) => counters.incr(key, timeWindow, max, (error, result) => (error ? reject(error) : resolve(result!))))),
  );
  return results.filter((result) => result.current <= max).length;
}

describe('LeasedRateLimitCounters (against Redis)', () => {
  let redis: Redis;
  let calls = 0;
  const prefix = `test-lease-${randomBytes(4).toString('hex')}:`;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
    // The first instance defines the script command; count its calls from here on.
    new LeasedRateLimitCounters({ redis, prefix });
    const lease = (redis as unknown as { notifyLease: (...args: unknown[]) => Promise<unknown> }).notifyLease.bind(redis);
    (redis as unknown as { notifyLease: unknown }).notifyLease = (...args: unknown[]) => {
      calls++;
      return lease(...args);
    };
  });
  afterAll(() => redis.disconnect());

  const counters = (options: { exact?: (key: string) => boolean } = {}) => new LeasedRateLimitCounters({ redis, prefix, ...options });

  it('three instances together let exactly the limit through', async () => {
    const fleet = [counters(), counters(), counters()];
    const allowed = await Promise.all(fleet.map((instance) => requests(instance, 'k:fleet', 500, 700)));
    expect(allowed.reduce((sum, n) => sum + n, 0)).toBe(700);
    expect(Number(await redis.get(`${prefix}k:fleet`))).toBe(700);
  });

  it('asks Redis rarely for a busy key with a big limit: leases double up to 5% of the limit', async () => {
    const instance = counters();
    calls = 0;
    expect(await requests(instance, 'k:busy', 20_000, 1_000_000)).toBe(20_000);
    // 1, 2, 4, … 16,384 tokens: about 15 leases for 20,000 requests.
    expect(calls).toBeLessThanOrEqual(20);
  });

  it('leases one token at a time for exact keys and small limits', async () => {
    calls = 0;
    expect(await requests(counters({ exact: (key) => key.startsWith('q') }), 'q:month', 30, 1_000_000)).toBe(30);
    expect(calls).toBe(30);
    calls = 0;
    expect(await requests(counters(), 'k:small', 30, 10)).toBe(10);
    expect(calls).toBeGreaterThanOrEqual(10);
  });

  it('starts a new window when the old one ends', async () => {
    const instance = counters();
    expect(await requests(instance, 'k:window', 5, 3, 200)).toBe(3);
    await pause(300); // past the 200 ms window
    expect(await requests(instance, 'k:window', 5, 3, 200)).toBe(3);
  });

  it('counts locally while Redis is away, rather than refusing everything', async () => {
    const away = new Redis('redis://127.0.0.1:9', { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true, enableOfflineQueue: false });
    const instance = new LeasedRateLimitCounters({ redis: away, prefix });
    expect(await requests(instance, 'k:away', 8, 5)).toBe(5);
    away.disconnect();
  });
});

describe('LeasedRateLimitCounters memory', () => {
  it('forgets the windows of idle keys, sweeping at most once a second', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const counters = new LeasedRateLimitCounters({ redis, prefix: `test-lease-${randomBytes(4).toString('hex')}:` });
      const windows = (counters as unknown as { windows: Map<string, unknown> }).windows;
      const t0 = Date.now();
      const count = (key: string, now: number) => new Promise<void>((resolve) => counters.incr(key, 100, 10, () => resolve(), now));
      for (let i = 0; i < 1100; i++) await count(`idle-${i}`, t0);
      expect(windows.size).toBe(1100);
      // Later, once those windows have ended: one new key sweeps them away.
      await count('fresh-1', t0 + 5000);
      expect(windows.size).toBe(1);
      // Within the second after a sweep, nothing is swept again.
      for (let i = 0; i < 1100; i++) await count(`idle2-${i}`, t0 + 5001);
      await count('fresh-2', t0 + 5500);
      expect(windows.size).toBe(1102);
    } finally {
      redis.disconnect();
    }
  });
});
