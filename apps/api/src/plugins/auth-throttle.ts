import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { redisKeys, type RedisClient, type RedisKeys } from '@notify/queues';
import { GatewayError } from '../errors/catalog';

/**
 * Failed authentication costs the one who fails. Every failure (a wrong or unknown API key, operator,
 * ingest or metrics token, console login) counts against the client's address and against the whole
 * fleet, in fixed windows of `windowMs`, in Redis (one script call: the counts hold across instances
 * and parallel requests cannot slip past a read). Once an address has spent its budget, everything it
 * presents is refused with a 429 before being checked, so it can neither guess further nor make the
 * database look up keys; past the fleet's budget, keys not already known to this instance are refused
 * too (a spread-out flood of unknown keys cannot reach the database), while known keys and valid
 * operator and ingest tokens keep working.
 *
 * Checks that cost something (a key the database must look up, a console login) reserve their
 * attempt before checking and give it back when the credential is right, so parallel tries never
 * exceed the budget. Cheap checks (tokens compared in memory) count only their failures. An
 * instance remembers which addresses are over budget until their window ends, so refusing them
 * needs no Redis call; another instance learns it at the address's next failure there. If Redis is
 * away, each instance counts alone.
 */

// KEYS[1] the address's counter, KEYS[2] the fleet's; ARGV[1] the window (ms); ARGV[2] 1 to add, -1 to give back.
// Returns both counts and the milliseconds left of their windows.
const COUNT = `
local out = {}
for i = 1, 2 do
  local count
  if ARGV[2] == '1' then
    count = redis.call('INCR', KEYS[i])
  else
    count = tonumber(redis.call('GET', KEYS[i]) or '0')
    if count > 0 then count = redis.call('DECR', KEYS[i]) end
  end
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl == -1 then
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
    ttl = tonumber(ARGV[1])
  elseif ttl == -2 then
    ttl = tonumber(ARGV[1])
  end
  out[2 * i - 1] = count
  out[2 * i] = ttl
end
return out
`;

export interface AuthThrottleOptions {
  redis: RedisClient;
  /** Redis key prefix (QUEUE_PREFIX). */
  prefix: string;
  /** Failures one client address may have per window. */
  perAddress: number;
  /** Failures all clients together may have per window. */
  total: number;
  windowMs: number;
}

export type Refused = { allowed: false; retryAfterSeconds: number };
export type Verdict = { allowed: true } | Refused;

interface Window {
  count: number;
  endsAt: number;
}

/** How many addresses an instance keeps in memory (blocked ones, and counts while Redis is away). */
const MAX_TRACKED = 100_000;

/**
 * The address a client is counted under: an IPv4 address as it is, an IPv6 address by its /64
 * (one customer's network; a host can pick any address within it), IPv4-mapped IPv6 as IPv4.
 */
export function clientKey(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const lower = ip.toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = lower.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill('0'), ...tailGroups];
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

export class AuthThrottle {
  private readonly blocked = new Map<string, number>();
  private totalBlockedUntil = 0;
  /** Counts kept here alone while Redis is away. */
  private readonly local = new Map<string, Window>();
  private localTotal: Window = { count: 0, endsAt: 0 };
  private readonly redis: { notifyAuthCount(address: string, total: string, windowMs: number, delta: string): Promise<number[]> };

  private readonly keys: RedisKeys;

  constructor(private readonly options: AuthThrottleOptions) {
    this.keys = redisKeys(options.prefix);
    if (!(options.redis as unknown as { notifyAuthCount?: unknown }).notifyAuthCount) {
      options.redis.defineCommand('notifyAuthCount', { lua: COUNT, numberOfKeys: 2 });
    }
    this.redis = options.redis as unknown as AuthThrottle['redis'];
  }

  /** A refusal when the address is known to be over its budget (no Redis call), else undefined. */
  refusal(ip: string, now = Date.now()): Refused | undefined {
    const until = this.blocked.get(clientKey(ip));
    if (until === undefined) return undefined;
    if (until <= now) {
      this.blocked.delete(clientKey(ip));
      return undefined;
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((until - now) / 1000)) };
  }

  /** A refusal while the fleet as a whole is over its budget (as far as this instance has seen), else undefined. */
  totalRefusal(now = Date.now()): Refused | undefined {
    if (this.totalBlockedUntil <= now) return undefined;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((this.totalBlockedUntil - now) / 1000)) };
  }

  /**
   * Counts one attempt before an expensive check. Refused (and not to be checked) when it is over
   * the address's budget or the fleet's; give it back with `succeeded` when the credential is right.
   */
  async reserve(ip: string): Promise<Verdict> {
    return this.count(ip, 'reserve');
  }

  /** Counts a failure of a cheap check; refused when that failure went over a budget. */
  async failed(ip: string): Promise<Verdict> {
    return this.count(ip, 'failure');
  }

  /** Gives back an attempt reserved by `reserve` whose credential was right. */
  succeeded(ip: string): void {
    const address = clientKey(ip);
    this.redis.notifyAuthCount(this.keys.authFailures(address), this.keys.authFailuresTotal, this.options.windowMs, '-1').catch(() => {
      const window = this.local.get(address);
      if (window && window.count > 0) window.count--;
      if (this.localTotal.count > 0) this.localTotal.count--;
    });
  }

  private async count(ip: string, kind: 'reserve' | 'failure'): Promise<Verdict> {
    const address = clientKey(ip);
    let counts: number[];
    try {
      counts = (await this.redis.notifyAuthCount(this.keys.authFailures(address), this.keys.authFailuresTotal, this.options.windowMs, '1')).map(Number);
    } catch {
      counts = this.countLocally(address);
    }
    const [perAddress = 0, addressTtl = 0, total = 0, totalTtl = 0] = counts;
    const now = Date.now();
    // A reservation is the attempt itself: it may be the budget's last. A failure already happened:
    // when it spent the budget, the next attempt is refused before it is checked.
    const addressOver = kind === 'reserve' ? perAddress > this.options.perAddress : perAddress >= this.options.perAddress;
    const totalOver = kind === 'reserve' ? total > this.options.total : total >= this.options.total;
    if (addressOver) this.block(address, now + addressTtl);
    if (totalOver) this.totalBlockedUntil = now + totalTtl;
    const refusedNow = kind === 'reserve' ? addressOver || totalOver : perAddress > this.options.perAddress;
    if (!refusedNow) return { allowed: true };
    const ttl = kind === 'reserve' && !addressOver ? totalTtl : addressTtl;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(ttl / 1000)) };
  }

  private block(address: string, until: number): void {
    this.blocked.delete(address);
    if (this.blocked.size >= MAX_TRACKED) this.forgetEnded(this.blocked, (value) => value);
    this.blocked.set(address, until);
  }

  private countLocally(address: string): number[] {
    const now = Date.now();
    let window = this.local.get(address);
    if (!window || window.endsAt <= now) {
      if (this.local.size >= MAX_TRACKED) this.forgetEnded(this.local, (value) => value.endsAt);
      window = { count: 0, endsAt: now + this.options.windowMs };
      this.local.set(address, window);
    }
    if (this.localTotal.endsAt <= now) this.localTotal = { count: 0, endsAt: now + this.options.windowMs };
    window.count++;
    this.localTotal.count++;
    return [window.count, window.endsAt - now, this.localTotal.count, this.localTotal.endsAt - now];
  }

  /** Drops ended entries; if none had ended, the oldest half (a flood of addresses cannot grow memory). */
  private forgetEnded<T>(map: Map<string, T>, endsAt: (value: T) => number): void {
    const now = Date.now();
    for (const [key, value] of map) if (endsAt(value) <= now) map.delete(key);
    if (map.size < MAX_TRACKED) return;
    let drop = map.size / 2;
    for (const key of map.keys()) {
      if (drop-- <= 0) break;
      map.delete(key);
    }
  }
}

/** The 429 of a client over its budget of failed authentication. */
export function throttled(verdict: Refused): GatewayError {
  return new GatewayError('authThrottled', { 'retry-after': verdict.retryAfterSeconds });
}

/**
 * Checks a token compared in memory: refused unseen when the address is over its budget of
 * failures; a wrong one counts as a failure (401, or 429 if that failure went over the budget).
 * No token at all is no guess (an expired console session, a scraper not set up yet): a 401, not counted.
 */
export async function checkCheapCredential(
  throttle: AuthThrottle,
  request: FastifyRequest,
  presented: string | Buffer | undefined,
  valid: () => boolean,
  refusal: () => GatewayError,
): Promise<void> {
  const blocked = throttle.refusal(request.ip);
  if (blocked) throw throttled(blocked);
  if (presented === undefined) throw refusal();
  if (valid()) return;
  const verdict = await throttle.failed(request.ip);
  throw verdict.allowed ? refusal() : throttled(verdict);
}
