import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RuleListCache } from './list-cache';

// get and set never reach Redis (only version() and invalidate() do).
const noRedis = null as unknown as Redis;

describe('RuleListCache accounting', () => {
  it('stays within its bounds in total and per organization, whatever is stored', () => {
    const cache = new RuleListCache(noRedis, 'p', { maxBytes: 100_000 });
    const held = new Map<string, number>();
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n);
    for (let i = 0; i < 5000; i++) {
      const org = `org${random(6)}`;
      const query = `q${random(40)}`;
      const body = 'x'.repeat(random(30_000));
      if (random(3) === 0) cache.get(org, query, 'v1');
      else cache.set(org, query, 'v1', body);
      expect(cache.bytes).toBeLessThanOrEqual(100_000);
      for (let o = 0; o < 6; o++) expect(cache.bytesOf(`org${o}`)).toBeLessThanOrEqual(25_000);
      held.set(org, cache.bytesOf(org));
    }
    expect([...held.keys()].reduce((sum, org) => sum + cache.bytesOf(org), 0)).toBe(cache.bytes);
  });

  it('weighs entries by their UTF-8 size, and does not keep a page larger than an organization may hold', () => {
    const cache = new RuleListCache(noRedis, 'p', { maxBytes: 40_000 });
    cache.set('o', 'q', 'v', 'é'.repeat(1000));
    expect(cache.bytes).toBeGreaterThanOrEqual(2000);
    cache.set('o', 'big', 'v', 'x'.repeat(10_001));
    expect(cache.get('o', 'big', 'v')).toBeUndefined();
    expect(cache.get('o', 'q', 'v')).toBe('é'.repeat(1000));
  });

  it('frees a page as soon as it is found stale', () => {
    const cache = new RuleListCache(noRedis, 'p', { maxBytes: 40_000, ttlMs: 1000 });
    cache.set('o', 'q', 'v1', 'body', 0);
    expect(cache.get('o', 'q', 'v2', 10)).toBeUndefined();
    expect(cache.bytes).toBe(0);
    cache.set('o', 'q', 'v1', 'body', 0);
    expect(cache.get('o', 'q', 'v1', 999)).toBe('body');
    expect(cache.get('o', 'q', 'v1', 1000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});
