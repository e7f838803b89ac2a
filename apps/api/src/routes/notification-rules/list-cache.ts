import type { RedisClient } from '@notify/queues';
import { bumpRuleListVersion, redisKeys } from '@notify/queues';

interface Entry {
  version: string;
  body: string;
  expiresAt: number;
}

/**
 * Serialized list pages by organization and query, valid while the
 * organization's rule version in Redis is unchanged (and for at most `ttlMs`, in
 * case something changed rules without saying so). Dashboards and integrations
 * poll the same pages over and over; a hit costs one Redis GET instead of a
 * query that counts and joins thousands of rows. Without Redis there is no
 * version to trust, so every request goes to the database.
 */
export class RuleListCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly options: { maxEntries: number; ttlMs: number } = { maxEntries: 5000, ttlMs: 60_000 },
  ) {}

  /** The organization's current version, or undefined when it cannot be known. */
  async version(organizationId: string): Promise<string | undefined> {
    try {
      return (await this.redis.get(redisKeys(this.prefix).ruleListVersion(organizationId))) ?? '0';
    } catch {
      return undefined;
    }
  }

  get(organizationId: string, query: string, version: string, now = Date.now()): string | undefined {
    const entry = this.entries.get(`${organizationId}|${query}`);
    if (!entry || entry.version !== version || entry.expiresAt <= now) return undefined;
    return entry.body;
  }

  set(organizationId: string, query: string, version: string, body: string): void {
    const key = `${organizationId}|${query}`;
    this.entries.delete(key);
    if (this.entries.size >= this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { version, body, expiresAt: Date.now() + this.options.ttlMs });
  }

  /** Forgets this instance's pages of the organization and tells the others. */
  async invalidate(organizationId: string): Promise<void> {
    for (const key of this.entries.keys()) if (key.startsWith(`${organizationId}|`)) this.entries.delete(key);
    await bumpRuleListVersion(this.redis, this.prefix, organizationId);
  }
}
