import { hashApiKey } from '@notify/core';
import type { KeyPrincipal } from '@notify/db';
import { LRUCache } from 'lru-cache';

/** lru-cache holds no null; an unknown key is remembered as `{ principal: null }`. */
interface Answer {
  principal: KeyPrincipal | null;
}

/**
 * Keeps the answer to "whose key is this?" for at most `ttlMs` (≤ 1 s, product
 * decisions §2), so a hot key costs the database one query a second rather than
 * one per request. Unknown keys are cached too, so a flood of bad keys cannot
 * reach the database either. Concurrent misses for one key share one lookup.
 *
 * At most `maxEntries` answers, the least recently used going first. An expired answer is not
 * served but stays until it is pushed out or replaced (no purge on read or timer), which is
 * what wasValid reads.
 */
export class KeyCache {
  private readonly answers: LRUCache<string, Answer>;
  private readonly inflight = new Map<string, Promise<KeyPrincipal | null>>();
  private generation = 0;

  constructor(
    private readonly lookup: (key: string) => Promise<KeyPrincipal | null>,
    private readonly ttlMs: number,
    maxEntries = 50_000,
  ) {
    // ttl 0 would mean "forever" to lru-cache; with ttlMs 0 nothing is remembered (resolve).
    this.answers = new LRUCache({ max: maxEntries, ttl: Math.max(ttlMs, 1), noDeleteOnStaleGet: true });
  }

  /** The answer this cache holds for `key` now (null: a known unknown key), or undefined when it must be looked up. */
  cached(key: string): KeyPrincipal | null | undefined {
    return this.answers.get(hashApiKey(key))?.principal;
  }

  /**
   * Whether this instance has seen `key` valid since the last invalidation, however long ago (entries
   * outlive their TTL until evicted): such a key is no guess, and is looked up even in a flood.
   */
  wasValid(key: string): boolean {
    return Boolean(this.answers.peek(hashApiKey(key), { allowStale: true })?.principal);
  }

  async resolve(key: string): Promise<KeyPrincipal | null> {
    const hash = hashApiKey(key);
    const answer = this.answers.get(hash);
    if (answer) return answer.principal;
    const pending = this.inflight.get(hash);
    if (pending) return pending;
    const generation = this.generation;
    const promise = this.lookup(key)
      .then((principal) => {
        // A lookup that raced an invalidation must not put the old answer back.
        if (generation === this.generation && this.ttlMs > 0) this.answers.set(hash, { principal });
        return principal;
      })
      .finally(() => this.inflight.delete(hash));
    this.inflight.set(hash, promise);
    return promise;
  }

  /** Forgets every answer (a key was revoked or changed: see subscribeToKeyInvalidations). */
  clear(): void {
    this.generation++;
    this.answers.clear();
  }
}
