import type { RedisClient } from '@notify/queues';
import { bumpRuleListVersion, redisKeys } from '@notify/queues';

interface Entry {
  organizationId: string;
  version: string;
  body: string;
  expiresAt: number;
  /** What the entry holds, in bytes (see sizeOf). */
  size: number;
}

interface Organization {
  bytes: number;
  /** The organization's keys, least recently used first. */
  keys: Set<string>;
}

export interface RuleListCacheOptions {
  /** Bytes all entries together may hold. */
  maxBytes: number;
  /** Bytes one organization's entries may hold; a quarter of `maxBytes` unless given. */
  maxBytesPerOrganization?: number;
  ttlMs?: number;
}

/** The Map entries, the Set slot and the Entry object, roughly, so that tiny pages are not free. */
const ENTRY_OVERHEAD_BYTES = 256;

/**
 * An entry's weight: its key and body as UTF-8 (what was serialized), which is what V8 holds for
 * ASCII text and never less than it holds for anything else, plus bookkeeping.
 */
function sizeOf(key: string, body: string): number {
  return Buffer.byteLength(key) + Buffer.byteLength(body) + ENTRY_OVERHEAD_BYTES;
}

/**
 * Serialized list pages by organization and query, valid while the
 * organization's rule version in Redis is unchanged (and for at most `ttlMs`, in
 * case something changed rules without saying so). Dashboards and integrations
 * poll the same pages over and over; a hit costs one Redis GET instead of a
 * query that counts and joins thousands of rows. Without Redis there is no
 * version to trust, so every request goes to the database.
 *
 * Bounded by bytes, not entries: every distinct query (a new `added_date__lte`) is a new page,
 * and pages run to megabytes, so a count of entries let one client grow the heap by a gigabyte.
 * Least recently used pages go first, the organization's own before anyone else's once it holds
 * its share, so one organization's queries cannot push every other organization's pages out.
 */
export class RuleListCache {
  private readonly entries = new Map<string, Entry>();
  private readonly organizations = new Map<string, Organization>();
  private totalBytes = 0;
  private readonly maxBytes: number;
  private readonly maxBytesPerOrganization: number;
  private readonly ttlMs: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    options: RuleListCacheOptions,
  ) {
    this.maxBytes = options.maxBytes;
    this.maxBytesPerOrganization = Math.min(options.maxBytesPerOrganization ?? Math.floor(options.maxBytes / 4), options.maxBytes);
    this.ttlMs = options.ttlMs ?? 60_000;
  }

  /** Bytes held by every entry (as counted against the bounds). */
  get bytes(): number {
    return this.totalBytes;
  }

  /** Bytes held by one organization's entries. */
  bytesOf(organizationId: string): number {
    return this.organizations.get(organizationId)?.bytes ?? 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The organization's current version, or undefined when it cannot be known. */
  async version(organizationId: string): Promise<string | undefined> {
    try {
      return (await this.redis.get(redisKeys(this.prefix).ruleListVersion(organizationId))) ?? '0';
    } catch {
      return undefined;
    }
  }

  get(organizationId: string, query: string, version: string, now = Date.now()): string | undefined {
    const key = `${organizationId}|${query}`;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.version !== version || entry.expiresAt <= now) {
      // A stale page is never served again: free it now rather than when it ages out.
      this.remove(key, entry);
      return undefined;
    }
    this.touch(key, entry);
    return entry.body;
  }

  set(organizationId: string, query: string, version: string, body: string, now = Date.now()): void {
    const key = `${organizationId}|${query}`;
    const existing = this.entries.get(key);
    if (existing) this.remove(key, existing);
    const size = sizeOf(key, body);
    if (size > this.maxBytesPerOrganization) return;
    while (this.bytesOf(organizationId) + size > this.maxBytesPerOrganization && this.evictOldest(this.organizations.get(organizationId)?.keys));
    while (this.totalBytes + size > this.maxBytes && this.evictOldest(this.entries.keys()));
    let organization = this.organizations.get(organizationId);
    if (!organization) {
      organization = { bytes: 0, keys: new Set<string>() };
      this.organizations.set(organizationId, organization);
    }
    this.entries.set(key, { organizationId, version, body, expiresAt: now + this.ttlMs, size });
    organization.keys.add(key);
    organization.bytes += size;
    this.totalBytes += size;
  }

  /** Forgets this instance's pages of the organization and tells the others. */
  async invalidate(organizationId: string): Promise<void> {
    const organization = this.organizations.get(organizationId);
    if (organization) {
      for (const key of [...organization.keys]) {
        const entry = this.entries.get(key);
        if (entry) this.remove(key, entry);
      }
    }
    await bumpRuleListVersion(this.redis, this.prefix, organizationId);
  }

  private touch(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    const keys = this.organizations.get(entry.organizationId)?.keys;
    keys?.delete(key);
    keys?.add(key);
  }

  /** Removes the first of `keys`; false when there is none. */
  private evictOldest(keys: Iterable<string> | undefined): boolean {
    for (const key of keys ?? []) {
      const entry = this.entries.get(key);
      if (entry) this.remove(key, entry);
      return entry !== undefined;
    }
    return false;
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.totalBytes -= entry.size;
    const organization = this.organizations.get(entry.organizationId);
    if (!organization) return;
    organization.keys.delete(key);
    organization.bytes -= entry.size;
    if (organization.keys.size === 0) this.organizations.delete(entry.organizationId);
  }
}
