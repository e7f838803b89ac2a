import type { RedisClient } from '@notify/queues';

/**
 * A store for @fastify/rate-limit whose limits hold exactly across any number of instances
 * without a Redis call per request. Each instance leases tokens of a key's window from Redis (one
 * script call that never grants past the limit) and spends them locally; when its lease runs out
 * it leases again (ahead of time, when a quarter of the last lease is left), doubling the lease while
 * requests keep coming, up to `LEASE_SHARE` of the limit.
 * So the instances together never let more than the limit through; what one instance holds unspent
 * when the others reach the limit (at most `LEASE_SHARE` of it each) is the price. A key with a
 * small limit leases one token at a time, that is, it asks Redis on every request.
 */

/** The largest lease, as a share of the limit. */
export const LEASE_SHARE = 0.05;

// Grants up to ARGV[1] tokens of the window, never past the limit ARGV[2]; the window
// (ARGV[3] ms) starts with the first grant. Returns the grant, the count and the window's rest.
const LEASE = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local grant = math.min(tonumber(ARGV[1]), math.max(tonumber(ARGV[2]) - count, 0))
if grant > 0 then count = redis.call('INCRBY', KEYS[1], grant) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  ttl = tonumber(ARGV[3])
elseif ttl == -2 then
  ttl = tonumber(ARGV[3])
end
return {grant, count, ttl}
`;

type Result = { current: number; ttl: number };
type Callback = (error: Error | null, result: Result | null) => void;

interface Window {
  endsAt: number;
  timeWindow: number;
  max: number;
  /** Leased here and not spent yet. */
  tokens: number;
  /** The fleet's count in Redis at the last lease (our unspent tokens included). */
  shared: number;
  /** The next lease's size. */
  lease: number;
  /** Requests waiting for a lease under way. */
  waiting: Callback[];
  leasing: boolean;
  /** Requests let through on local counting alone while Redis was away. */
  offline: number;
}

export interface LeasedStoreOptions {
  redis: RedisClient;
  prefix: string;
  /** Keys that lease one token at a time whatever their limit (monthly quotas: rare, and billed). */
  exact?: (key: string) => boolean;
}

export class LeasedRateLimitCounters {
  private readonly windows = new Map<string, Window>();
  private nextSweepAt = 0;
  private readonly redis: { notifyLease(key: string, want: number, max: number, window: number): Promise<[number, number, number]> };

  constructor(private readonly options: LeasedStoreOptions) {
    if (!(options.redis as unknown as { notifyLease?: unknown }).notifyLease) {
      options.redis.defineCommand('notifyLease', { lua: LEASE, numberOfKeys: 1 });
    }
    this.redis = options.redis as unknown as LeasedRateLimitCounters['redis'];
  }

  /** Counts one request of `key` against `max` per `timeWindow`; `current` past `max` means refused. */
  incr(key: string, timeWindow: number, max: number, callback: Callback, now = Date.now()): void {
    let window = this.windows.get(key);
    if (!window || now >= window.endsAt) {
      if (window?.leasing) {
        // The old window's lease is still answering: this request waits for it, and is judged with it.
        window.waiting.push(callback);
        return;
      }
      // A key busy in its last window is likely busy in this one: its lease size carries over.
      window = { endsAt: now + timeWindow, timeWindow, max, tokens: 0, shared: 0, lease: window?.lease ?? 1, waiting: [], leasing: false, offline: 0 };
      this.windows.set(key, window);
      this.forgetEnded(now);
    }
    window.max = max;
    if (window.tokens > 0) {
      window.tokens--;
      callback(null, { current: window.shared - window.tokens, ttl: window.endsAt - now });
      // Lease the next tokens before these run out, so a busy key's requests never wait for Redis.
      if (window.lease >= 4 && window.tokens < window.lease / 4 && !window.leasing) void this.leaseFor(key, window);
      return;
    }
    window.waiting.push(callback);
    if (!window.leasing) void this.leaseFor(key, window);
  }

  private async leaseFor(key: string, window: Window): Promise<void> {
    window.leasing = true;
    const exact = this.options.exact?.(key) ?? false;
    const largest = exact ? 1 : Math.max(1, Math.floor(window.max * LEASE_SHARE));
    const want = Math.min(largest, Math.max(window.lease, window.waiting.length));
    try {
      const [grant, count, ttl] = await this.redis.notifyLease(`${this.options.prefix}${key}`, want, window.max, window.timeWindow);
      const now = Date.now();
      window.shared = Number(count);
      window.endsAt = now + Number(ttl);
      window.tokens += Number(grant);
      // Busy keys lease more at a time; a lease that came back short means the limit is reached.
      window.lease = Math.min(largest, want * 2);
      const waiting = window.waiting.splice(0);
      for (const callback of waiting) {
        if (window.tokens > 0) {
          window.tokens--;
          callback(null, { current: window.shared - window.tokens, ttl: window.endsAt - now });
        } else if (Number(grant) < want) {
          callback(null, { current: window.max + 1, ttl: window.endsAt - now });
        } else {
          window.waiting.push(callback);
        }
      }
    } catch {
      // Redis is away: count here alone rather than fail every request.
      const now = Date.now();
      for (const callback of window.waiting.splice(0)) {
        window.offline++;
        callback(null, { current: Math.min(window.offline, window.max + 1), ttl: window.endsAt - now });
      }
    } finally {
      window.leasing = false;
    }
    if (window.waiting.length) void this.leaseFor(key, window);
  }

  /**
   * Drops windows that have ended and have nothing under way, so idle keys cost no memory. At most
   * once a second: with thousands of busy keys a window starts somewhere on nearly every request.
   */
  private forgetEnded(now: number): void {
    if (this.windows.size < 1024 || now < this.nextSweepAt) return;
    this.nextSweepAt = now + 1000;
    for (const [key, window] of this.windows) if (now >= window.endsAt && !window.leasing) this.windows.delete(key);
  }
}

/** The class @fastify/rate-limit instantiates (`store` option); every limiter shares the counters. */
export function leasedStore(counters: LeasedRateLimitCounters) {
  return class LeasedRedisStore {
    incr(key: string, callback: Callback, timeWindow: number, max: number): void {
      counters.incr(key, timeWindow, max, callback);
    }

    child(): LeasedRedisStore {
      return this;
    }
  };
}
