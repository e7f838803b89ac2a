import { hashApiKey } from '@notify/core';
import type { KeyPrincipal } from '@notify/db';

interface Entry {
  principal: KeyPrincipal | null;
  expiresAt: number;
}

/**
 * Keeps the answer to "whose key is this?" for at most `ttlMs` (≤ 1 s, product
 * decisions §2), so a hot key costs the database one query a second rather than
 * one per request. Unknown keys are cached too, so a flood of bad keys cannot
 * reach the database either. Concurrent misses for one key share one lookup.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<KeyPrincipal | null>>();
  private generation = 0;

  constructor(
    private readonly lookup: (key: string) => Promise<KeyPrincipal | null>,
    private readonly ttlMs: number,
    private readonly maxEntries = 50_000,
  ) {}

  async resolve(key: string, now = Date.now()): Promise<KeyPrincipal | null> {
    const hash = hashApiKey(key);
    const entry = this.entries.get(hash);
    if (entry && entry.expiresAt > now) return entry.principal;
    const pending = this.inflight.get(hash);
    if (pending) return pending;
    const generation = this.generation;
    const promise = this.lookup(key)
      .then((principal) => {
        // A lookup that raced an invalidation must not put the old answer back.
        if (generation === this.generation && this.ttlMs > 0) this.remember(hash, principal, Date.now() + this.ttlMs);
        return principal;
      })
      .finally(() => this.inflight.delete(hash));
    this.inflight.set(hash, promise);
    return promise;
  }

  private remember(hash: string, principal: KeyPrincipal | null, expiresAt: number): void {
    this.entries.delete(hash);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(hash, { principal, expiresAt });
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
