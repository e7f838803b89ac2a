import type { Redis } from 'ioredis';

/**
 * A store for @fastify/rate-limit that counts in the process and settles with
 * Redis every `syncMs`, in one round trip for every key at once — the way API
 * gateways keep shared limits without a Redis call per request (Kong's
 * `sync_rate`). One instance counts exactly; across instances a limit can be
 * overrun by what they take during one sync interval.
 */

// Adds each key's local count, starts its window on first use, and returns the
// shared counts and what remains of each window.
const SETTLE = `
local out = {}
for i, key in ipairs(KEYS) do
  local n = tonumber(ARGV[2 * i - 1])
  local window = tonumber(ARGV[2 * i])
  local count = redis.call('INCRBY', key, n)
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    redis.call('PEXPIRE', key, window)
    ttl = window
  end
  out[2 * i - 1] = count
  out[2 * i] = ttl
end
return out
`;

interface Counter {
  /** The shared count at the last settlement (our own earlier requests included). */
  shared: number;
  /** Requests counted here since, not yet sent. */
  pending: number;
  /** Requests sent in the settlement under way. */
  sending: number;
  windowEndsAt: number;
  timeWindow: number;
}

type Callback = (error: Error | null, result: { current: number; ttl: number } | null) => void;

export interface SyncedStoreOptions {
  redis: Redis;
  prefix: string;
  syncMs: number;
  /** Keys counted in Redis on every request (e.g. monthly quotas: rare, and billed). */
  exact?: (key: string) => boolean;
}

export class SyncedRateLimitCounters {
  private readonly counters = new Map<string, Counter>();
  private timer: NodeJS.Timeout | undefined;
  private settling: Promise<void> | undefined;

  constructor(private readonly options: SyncedStoreOptions) {
    if (!(options.redis as unknown as { notifySettle?: unknown }).notifySettle) {
      options.redis.defineCommand('notifySettle', { lua: SETTLE });
    }
  }

  isExact(key: string): boolean {
    return this.options.exact?.(key) ?? false;
  }

  /** Counts one request in Redis now, for keys that may not overrun at all. */
  async incrExact(key: string, timeWindow: number): Promise<{ current: number; ttl: number }> {
    const [count, ttl] = await this.run([`${this.options.prefix}${key}`], [1, timeWindow]);
    return { current: Number(count), ttl: Number(ttl) };
  }

  private run(keys: string[], args: number[]): Promise<number[]> {
    const redis = this.options.redis as unknown as { notifySettle(n: number, ...rest: Array<string | number>): Promise<number[]> };
    return redis.notifySettle(keys.length, ...keys, ...args);
  }

  incr(key: string, timeWindow: number, now = Date.now()): { current: number; ttl: number } {
    let counter = this.counters.get(key);
    if (!counter || now >= counter.windowEndsAt) {
      counter = { shared: 0, pending: 0, sending: counter?.sending ?? 0, windowEndsAt: now + timeWindow, timeWindow };
      this.counters.set(key, counter);
    }
    counter.pending++;
    this.timer ??= setTimeout(() => void this.settle(), this.options.syncMs).unref();
    return { current: counter.shared + counter.sending + counter.pending, ttl: counter.windowEndsAt - now };
  }

  /** Sends every key's pending count in one script call and takes the shared counts back. */
  async settle(): Promise<void> {
    this.timer = undefined;
    if (this.settling) {
      await this.settling;
      return;
    }
    const now = Date.now();
    const batch: Array<[string, Counter, number]> = [];
    for (const [key, counter] of this.counters) {
      if (counter.pending > 0) {
        batch.push([key, counter, counter.pending]);
        counter.sending += counter.pending;
        counter.pending = 0;
      } else if (counter.sending === 0 && now >= counter.windowEndsAt) {
        this.counters.delete(key);
      }
    }
    if (!batch.length) return;
    const keys = batch.map(([key]) => `${this.options.prefix}${key}`);
    const args = batch.flatMap(([, counter, n]) => [n, counter.timeWindow]);
    this.settling = (async () => {
      try {
        const result = await this.run(keys, args);
        const settledAt = Date.now();
        batch.forEach(([, counter, n], i) => {
          counter.sending -= n;
          counter.shared = Number(result[2 * i]);
          counter.windowEndsAt = settledAt + Number(result[2 * i + 1]);
        });
      } catch {
        // Redis is away: keep counting here and send the counts with the next settlement.
        for (const [, counter, n] of batch) {
          counter.sending -= n;
          counter.pending += n;
        }
      } finally {
        this.settling = undefined;
        if ([...this.counters.values()].some((counter) => counter.pending > 0)) {
          this.timer ??= setTimeout(() => void this.settle(), this.options.syncMs).unref();
        }
      }
    })();
    await this.settling;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The class @fastify/rate-limit instantiates (`store` option); every limiter shares the counters. */
export function syncedStore(counters: SyncedRateLimitCounters) {
  return class SyncedRedisStore {
    incr(key: string, callback: Callback, timeWindow: number): void {
      if (counters.isExact(key)) {
        counters.incrExact(key, timeWindow).then((result) => callback(null, result), (error: Error) => callback(error, null));
        return;
      }
      callback(null, counters.incr(key, timeWindow));
    }

    child(): SyncedRedisStore {
      return this;
    }
  };
}
