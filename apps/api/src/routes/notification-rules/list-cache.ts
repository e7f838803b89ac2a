import type { RedisClient } from '@notify/queues';
import { bumpRuleListVersion, redisKeys } from '@notify/queues';
import { LRUCache } from 'lru-cache';

interface Page {
  organizationId: string;
  version: string;
  body: string;
  expiresAt: number;
  /** What the page holds, in bytes (see sizeOf). */
  size: number;
}

export interface RuleListCacheOptions {
  /** Bytes all entries together may hold. */
  maxBytes: number;
  /** Bytes one organization's entries may hold; a quarter of `maxBytes` unless given. */
  maxBytesPerOrganization?: number;
  ttlMs?: number;
}

/** The two caches' slots and the Page object, roughly, so that tiny pages are not free. */
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
 * and pages run to megabytes, so a bound on the count of entries still let one client fill the heap.
 * Least recently used pages go first, the organization's own before anyone else's once it holds
 * its share, so one organization's queries cannot push every other organization's pages out.
 */
export class RuleListCache {
  /** Every page, least recently used first, within `maxBytes`. */
  private readonly pages: LRUCache<string, Page>;
  /** Each organization's pages again, least recently used first, within its share. */
  private readonly organizations = new Map<string, LRUCache<string, Page>>();
  private readonly maxBytesPerOrganization: number;
  private readonly ttlMs: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    options: RuleListCacheOptions,
  ) {
    this.maxBytesPerOrganization = Math.min(options.maxBytesPerOrganization ?? Math.floor(options.maxBytes / 4), options.maxBytes);
    this.ttlMs = options.ttlMs ?? 60_000;
    // A page leaves both caches together, whichever pushed it out: after the operation (disposeAfter),
    // so that one cache is never changed from inside the other's eviction.
    this.pages = new LRUCache<string, Page>({
      // lru-cache takes no bound of 0; with one, no page fits an organization's share (set).
      maxSize: Math.max(options.maxBytes, 1),
      sizeCalculation: (page) => page.size,
      disposeAfter: (page, key) => this.forgetInOrganization(page, key),
    });
  }

  /** Bytes held by every page (as counted against the bounds). */
  get bytes(): number {
    return this.pages.calculatedSize;
  }

  /** Bytes held by one organization's pages. */
  bytesOf(organizationId: string): number {
    return this.organizations.get(organizationId)?.calculatedSize ?? 0;
  }

  get size(): number {
    return this.pages.size;
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
    const page = this.pages.get(key);
    if (!page) return undefined;
    // Expiry is checked here, against the caller's clock, rather than by lru-cache's ttl (its own clock).
    if (page.version !== version || page.expiresAt <= now) {
      // A stale page is never served again: free it now rather than when it ages out.
      this.pages.delete(key);
      return undefined;
    }
    this.organizations.get(organizationId)?.get(key);
    return page.body;
  }

  set(organizationId: string, query: string, version: string, body: string, now = Date.now()): void {
    const key = `${organizationId}|${query}`;
    this.pages.delete(key);
    const size = sizeOf(key, body);
    if (size > this.maxBytesPerOrganization) return;
    const page: Page = { organizationId, version, body, expiresAt: now + this.ttlMs, size };
    let organization = this.organizations.get(organizationId);
    if (!organization) {
      organization = new LRUCache<string, Page>({
        maxSize: this.maxBytesPerOrganization,
        sizeCalculation: (held) => held.size,
        disposeAfter: (held, heldKey) => {
          if (this.pages.peek(heldKey) === held) this.pages.delete(heldKey);
        },
      });
      this.organizations.set(organizationId, organization);
    }
    // The organization's own least recently used pages make room first, then anyone's.
    organization.set(key, page);
    this.pages.set(key, page);
  }

  /** Forgets this instance's pages of the organization and tells the others. */
  async invalidate(organizationId: string): Promise<void> {
    const organization = this.organizations.get(organizationId);
    if (organization) for (const key of [...organization.keys()]) this.pages.delete(key);
    await bumpRuleListVersion(this.redis, this.prefix, organizationId);
  }

  private forgetInOrganization(page: Page, key: string): void {
    const organization = this.organizations.get(page.organizationId);
    if (!organization || organization.peek(key) !== page) return;
    organization.delete(key);
    if (organization.size === 0) this.organizations.delete(page.organizationId);
  }
}
